import { expect } from 'chai';
import type Koa from 'koa';
import { credentialAllowedAt } from '../api/oauth/access-tokens.js';
import { oauthClock } from '../api/oauth/clock.js';
import { resourceCovers } from '../api/oauth/resource.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { obtainCode, obtainTokens, pkcePair, postToken, registerPublicClient, type ClientRegistration } from './support/oauth-browserless.js';
import { newOAuthUser, type TestUser } from './support/oauth-users.js';

/** Access tokens on the API: a standard key of the chosen workspace, for as long as the grant lives. */
describe('oauth: access tokens on the API', () => {
  let mine: Awaited<ReturnType<typeof newTenant>>;
  let theirs: Awaited<ReturnType<typeof newTenant>>;
  let person: TestUser;
  let client: ClientRegistration;

  before(async () => {
    mine = await newTenant('oauth-access-mine');
    theirs = await newTenant('oauth-access-theirs');
    person = await newOAuthUser([mine.tenantId], 'access');
    client = await registerPublicClient();
  });

  afterEach(() => {
    oauthClock.now = () => new Date();
  });

  it('acts as a standard key of the chosen workspace', async () => {
    const { access_token: token } = await obtainTokens({ client, user: person });
    const created = await call('POST', '/v1/agents', { key: token, body: { name: 'made-by-token' } });
    expect(created.status).to.equal(201);
    const listed = await call('GET', '/v1/agents', { key: mine.key });
    expect(listed.body.agents.map((agent: { id: string }) => agent.id)).to.include(created.body.agent.id);
    expect((await call('PATCH', `/v1/agents/${created.body.agent.id}`, { key: token, body: { description: 'x' } })).status).to.equal(403);
    expect((await call('GET', '/v1/api-keys', { key: token })).status).to.equal(403);
  });

  it("answers 404 for another workspace's ids", async () => {
    const { access_token: token } = await obtainTokens({ client, user: person });
    const foreign = (await call('POST', '/v1/agents', { key: theirs.key, body: { name: 'foreign' } })).body.agent;
    for (const [method, body] of [['GET', undefined], ['DELETE', undefined], ['POST', { graph: { nodes: [{ id: 'x' }] } }]] as const) {
      const path = method === 'POST' ? `/v1/agents/${foreign.id}/versions` : `/v1/agents/${foreign.id}`;
      const response = await call(method, path, { key: token, body });
      expect(response.status, `${method} ${path}`).to.equal(404);
    }
    expect((await call('GET', `/v1/agents/${foreign.id}`, { key: theirs.key })).status).to.equal(200);
  });

  it('answers 401 once the access token has expired (1 hour)', async () => {
    const { access_token: token } = await obtainTokens({ client, user: person });
    oauthClock.now = () => new Date(Date.now() + 3599 * 1000);
    expect((await call('GET', '/v1/agents', { key: token })).status).to.equal(200);
    oauthClock.now = () => new Date(Date.now() + 3601 * 1000);
    const expired = await call('GET', '/v1/agents', { key: token });
    expect(expired.status).to.equal(401);
    expect(expired.headers.get('www-authenticate')).to.match(/^Bearer /);
  });

  it('answers 401 to an unknown token, and to a token whose user left the workspace', async () => {
    expect((await call('GET', '/v1/agents', { key: `svc_at_${'x'.repeat(43)}` })).status).to.equal(401);
    const leaver = await newOAuthUser([mine.tenantId], 'leaver');
    const { access_token: token } = await obtainTokens({ client, user: leaver });
    expect((await call('GET', '/v1/agents', { key: token })).status).to.equal(200);
    await testPlatform().db.deleteFrom('memberships').where('user_id', '=', leaver.userId).execute();
    expect((await call('GET', '/v1/agents', { key: token })).status).to.equal(401);
  });

  it('stores tokens only as hashes, with the tenant of the grant, behind row-level security', async () => {
    const tokens = await obtainTokens({ client, user: person });
    const rows = await testPlatform().db.selectFrom('oauth_tokens').select(['token_hash', 'tenant_id']).where('tenant_id', '=', mine.tenantId).execute();
    expect(rows.length).to.be.above(1);
    for (const row of rows) {
      expect(row.token_hash).to.match(/^[0-9a-f]{64}$/);
      expect([tokens.access_token, tokens.refresh_token]).to.not.include(row.token_hash);
    }
    // Row-level security: as another workspace, none of these rows is visible.
    const seenByOthers = await withTenant(testPlatform().db, theirs.tenantId, async (tx) => [
      ...(await tx.selectFrom('oauth_tokens').select('tenant_id').where('tenant_id', '=', mine.tenantId).execute()),
      ...(await tx.selectFrom('oauth_grants').select('tenant_id').where('tenant_id', '=', mine.tenantId).execute()),
      ...(await tx.selectFrom('memberships').select('tenant_id').where('tenant_id', '=', mine.tenantId).execute()),
    ]);
    expect(seenByOthers).to.deep.equal([]);
  });

  describe('resource indicators (RFC 8707)', () => {
    const apiUrl = () => testPlatform().apiUrl;

    it('records the resource on the grant and its tokens', async () => {
      await obtainTokens({ client, user: person, resource: `${apiUrl()}/mcp` });
      const grant = await testPlatform()
        .db.selectFrom('oauth_grants')
        .select(['id', 'resource'])
        .where('client_id', '=', client.clientId)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(grant.resource).to.equal(`${apiUrl()}/mcp`);
      const tokens = await testPlatform().db.selectFrom('oauth_tokens').select(['resource', 'resource_path']).where('grant_id', '=', grant.id).execute();
      expect(tokens).to.have.length(2);
      for (const token of tokens) expect(token).to.deep.equal({ resource: `${apiUrl()}/mcp`, resource_path: '/mcp' });
    });

    it('keeps a token for /mcp off the REST API; a token for the whole service works everywhere', async () => {
      const forMcp = await obtainTokens({ client, user: person, resource: `${apiUrl()}/mcp` });
      const refused = await call('GET', '/v1/agents', { key: forMcp.access_token });
      expect(refused.status).to.equal(401);
      const forService = await obtainTokens({ client, user: person, resource: apiUrl() });
      expect((await call('GET', '/v1/agents', { key: forService.access_token })).status).to.equal(200);
    });

    it('lets the token request narrow the resource, never widen it', async () => {
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode({ client, user: person, challenge, resource: `${apiUrl()}/mcp` });
      const widened = await postToken({
        grant_type: 'authorization_code',
        client_id: client.clientId,
        code,
        redirect_uri: client.redirectUri,
        code_verifier: verifier,
        resource: `${apiUrl()}/v1`,
      });
      expect(widened.status).to.equal(400);
      expect(widened.body.error).to.equal('invalid_target');

      const whole = await obtainTokens({ client, user: person });
      const narrowed = await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: whole.refresh_token, resource: `${apiUrl()}/mcp` });
      expect(narrowed.status).to.equal(200);
      expect((await call('GET', '/v1/agents', { key: narrowed.body.access_token })).status).to.equal(401);
    });

    it('offers the MCP server a check by its own address', async () => {
      const mcpUrl = `${apiUrl()}/mcp`;
      expect(resourceCovers(null, mcpUrl)).to.equal(true);
      expect(resourceCovers(apiUrl(), mcpUrl)).to.equal(true);
      expect(resourceCovers(mcpUrl, mcpUrl)).to.equal(true);
      expect(resourceCovers(`${apiUrl()}/v1`, mcpUrl)).to.equal(false);

      const withBearer = (credential: string) => ({ get: (name: string) => (name.toLowerCase() === 'authorization' ? `Bearer ${credential}` : '') }) as unknown as Koa.Context;
      const forV1 = await obtainTokens({ client, user: person, resource: `${apiUrl()}/v1` });
      const forMcp = await obtainTokens({ client, user: person, resource: mcpUrl });
      const db = testPlatform().db;
      expect(await credentialAllowedAt(db, withBearer(forMcp.access_token), mcpUrl)).to.equal(true);
      expect(await credentialAllowedAt(db, withBearer(forV1.access_token), mcpUrl)).to.equal(false);
      expect(await credentialAllowedAt(db, withBearer(mine.standardKey), mcpUrl)).to.equal(true);
    });
  });
});
