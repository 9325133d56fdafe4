import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { oauthClock } from '../api/oauth/clock.js';
import { upsertUser } from '../api/oauth/users.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { callTool, mcpUrl } from './support/mcp-client.js';
import { approveInBrowser, TestOAuthProvider } from './support/mcp-oauth.js';

describe('mcp with OAuth', () => {
  let tenantId: string;
  let user: { email: string; password: string; tenantId: string };

  before(async () => {
    let key: string;
    ({ tenantId, key } = await newTenant('mcp-oauth'));
    user = { email: `mcp-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery staple', tenantId };
    await upsertUser(testPlatform().db, { email: user.email, password: user.password, tenantIds: [tenantId] });
    expect((await call('POST', '/v1/agents', { key, body: { name: 'seen-over-oauth' } })).status).to.equal(201);
    // Another workspace's agent, which the token must not reach.
    const other = await newTenant('mcp-oauth-other');
    await call('POST', '/v1/agents', { key: other.key, body: { name: 'not-yours' } });
  });

  it('mcp client: discovers the authorization server from the 401, registers, gets consent and a token, then uses the tools', async () => {
    const apiUrl = testPlatform().apiUrl;
    const provider = new TestOAuthProvider();
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    let error: unknown;
    try {
      await first.connect(transport);
    } catch (err) {
      error = err;
    }
    expect(error, String(error)).to.be.instanceOf(UnauthorizedError);
    expect(provider.client?.client_id, 'dynamic client registration').to.be.a('string');
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).to.equal(`${apiUrl}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('resource')).to.equal(`${apiUrl}/mcp`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorizationUrl.searchParams.get('scope')).to.equal('api');

    const { code } = await approveInBrowser(authorizationUrl, user, provider.redirectUrl);
    await transport.finishAuth(code);
    expect(provider.savedTokens?.access_token).to.match(/^svc_at_/);

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).to.include.members(['listAgents', 'createAgent', 'getRun']);

      const listed = await callTool(client, 'listAgents');
      expect(listed.isError, JSON.stringify(listed.body)).to.equal(false);
      expect(listed.body.agents.map((agent: any) => agent.name)).to.deep.equal(['seen-over-oauth']);

      const created = await callTool(client, 'createAgent', { body: { name: 'made-over-oauth' } });
      expect(created.isError, JSON.stringify(created.body)).to.equal(false);

      // A token has a standard key's reach.
      const update = await callTool(client, 'updateAgent', { id: created.body.agent.id, body: { description: 'x' } });
      expect(update.isError).to.equal(true);
      expect(update.body.status).to.equal(403);
    } finally {
      await client.close();
    }
  });

  it('mcp auth: answers 401 invalid_token, not 500, to an expired access token', async () => {
    const { access_token } = await tokenFor(user, `${testPlatform().apiUrl}/mcp`);
    expect((await listTools(access_token)).status).to.equal(200);

    const realNow = oauthClock.now;
    oauthClock.now = () => new Date(realNow().getTime() + 24 * 3600 * 1000);
    try {
      const response = await listTools(access_token);
      expect(response.status).to.equal(401);
      const challenge = response.headers.get('www-authenticate')!;
      expect(challenge).to.include(`resource_metadata="${testPlatform().apiUrl}/.well-known/oauth-protected-resource/mcp"`);
      expect(challenge).to.include('error="invalid_token"');
    } finally {
      oauthClock.now = realNow;
    }
  });

  it('mcp auth: refuses a token issued for another resource, and accepts one issued for the whole service', async () => {
    const apiUrl = testPlatform().apiUrl;
    const elsewhere = await tokenFor(user, `${apiUrl}/v1`);
    const refused = await listTools(elsewhere.access_token);
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('www-authenticate')).to.include('error="invalid_token"');

    const everywhere = await tokenFor(user, undefined);
    expect((await listTools(everywhere.access_token)).status).to.equal(200);
  });
});

function listTools(token: string): Promise<Response> {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

/** The authorization-code flow by hand (register, authorize with PKCE, consent, exchange), for a chosen resource. */
async function tokenFor(user: { email: string; password: string; tenantId: string }, resource: string | undefined): Promise<{ access_token: string }> {
  const apiUrl = testPlatform().apiUrl;
  const redirectUri = 'http://127.0.0.1:9/callback';
  const registered = await fetch(`${apiUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'resource test', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  expect(registered.status).to.equal(201);
  const { client_id } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${apiUrl}/oauth/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id,
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    scope: 'api',
    ...(resource && { resource }),
  }).toString();
  const { code } = await approveInBrowser(authorize, user, redirectUri);
  const token = await fetch(`${apiUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id, redirect_uri: redirectUri, code, code_verifier: verifier, ...(resource && { resource }) }),
  });
  const body = (await token.json()) as { access_token: string };
  expect(token.status, JSON.stringify(body)).to.equal(200);
  return body;
}
