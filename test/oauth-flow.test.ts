import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { consentInBrowser, launchChromium } from './support/oauth-browser.js';
import { fetchFrom, REGISTRATION_ADDRESS } from './support/oauth-local-address.js';
import { startRedirectServer, type RedirectServer } from './support/oauth-redirect-server.js';
import { newOAuthUser, type TestUser } from './support/oauth-users.js';

/**
 * The whole flow as a third-party client lives it: oauth4webapi discovers the server, registers itself,
 * sends a person (headless Chromium) to the consent page with PKCE, exchanges the code, calls the API,
 * refreshes, and revokes.
 */
describe('oauth: authorization code flow with a real client and browser', function () {
  this.timeout(120_000);

  // Plain http on 127.0.0.1 is what the test platform serves; real deployments use https.
  const insecure = { [oauth.allowInsecureRequests]: true };
  // Registrations come from this run's own loopback address (see support/oauth-local-address.ts).
  const registrationOptions = { ...insecure, [oauth.customFetch]: fetchFrom(REGISTRATION_ADDRESS) };
  let browser: Browser;
  let redirect: RedirectServer;
  let tenantA: Awaited<ReturnType<typeof newTenant>>;
  let tenantB: Awaited<ReturnType<typeof newTenant>>;
  let person: TestUser;
  let as: oauth.AuthorizationServer;

  before(async () => {
    browser = await launchChromium();
    redirect = await startRedirectServer();
    tenantA = await newTenant('oauth-flow-a');
    tenantB = await newTenant('oauth-flow-b');
    person = await newOAuthUser([tenantA.tenantId, tenantB.tenantId], 'flow');
    const issuer = new URL(testPlatform().apiUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });

  after(async () => {
    await browser?.close();
    await redirect?.close();
  });

  /** Registers a client the way a third-party client registers itself, redirected to the test's server. */
  async function registerClient(clientName: string, authMethod: 'none' | 'client_secret_basic') {
    return oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: clientName, redirect_uris: [redirect.redirectUri], token_endpoint_auth_method: authMethod },
        registrationOptions,
      ),
    );
  }

  /** Where the client sends the browser: its authorization request with PKCE (and `scope` when given). */
  async function authorizationUrl(client: oauth.Client, verifier: string, state: string, scope?: string): Promise<string> {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect.redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(scope && { scope }),
      state,
    }).toString();
    return url.href;
  }

  /** Registers a client, runs the consent in the browser, and answers the client with its tokens. */
  async function authorizeInBrowser(authMethod: 'none' | 'client_secret_basic', workspaceId: string) {
    const registered = await registerClient('Flow test client', authMethod);
    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: authMethod };
    const clientAuth = authMethod === 'none' ? oauth.None() : oauth.ClientSecretBasic(registered.client_secret as string);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = await authorizationUrl(client, verifier, state, 'api');
    const callback = await consentInBrowser(browser, url, redirect.redirectUri, { ...person, workspaceId });
    const parameters = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, parameters, redirect.redirectUri, verifier, insecure),
    );
    return { client, clientAuth, tokens, callback };
  }

  it('announces its endpoints in the RFC 8414 metadata', () => {
    const base = testPlatform().apiUrl;
    expect(as).to.include({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
    });
    expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(as.scopes_supported).to.deep.equal(['api']);
  });

  it('registers, consents in the browser, exchanges the code, and calls the API like a standard key', async () => {
    const { client, clientAuth, tokens, callback } = await authorizeInBrowser('none', tenantB.tenantId);
    expect(callback.searchParams.get('iss')).to.equal(testPlatform().apiUrl);
    expect(tokens.access_token).to.match(/^svc_at_[0-9A-Za-z]{43}$/);
    expect(tokens.refresh_token).to.match(/^svc_rt_[0-9A-Za-z]{43}$/);
    expect(tokens).to.include({ token_type: 'bearer', expires_in: 3600, scope: 'api' });

    // The chosen workspace is B: its agents are visible, A's are not.
    const agentB = (await call('POST', '/v1/agents', { key: tenantB.key, body: { name: 'in-b' } })).body.agent;
    await call('POST', '/v1/agents', { key: tenantA.key, body: { name: 'in-a' } });
    const listed = await call('GET', '/v1/agents', { key: tokens.access_token });
    expect(listed.status).to.equal(200);
    expect(listed.body.agents.map((agent: { name: string }) => agent.name)).to.deep.equal(['in-b']);

    // Standard reach: creating works, management-only operations answer 403.
    expect((await call('POST', '/v1/agents', { key: tokens.access_token, body: { name: 'by-token' } })).status).to.equal(201);
    const patch = await call('PATCH', `/v1/agents/${agentB.id}`, { key: tokens.access_token, body: { description: 'x' } });
    expect(patch.status).to.equal(403);
    expect(patch.body.error.code).to.equal('forbidden');

    // Refresh rotates both tokens; the new access token works.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).to.not.equal(tokens.refresh_token);
    expect(refreshed.access_token).to.not.equal(tokens.access_token);
    expect((await call('GET', '/v1/agents', { key: refreshed.access_token })).status).to.equal(200);

    // Revoking the refresh token revokes the grant: every access token of it stops working.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token!, insecure));
    for (const token of [tokens.access_token, refreshed.access_token]) {
      const after = await call('GET', '/v1/agents', { key: token });
      expect(after.status).to.equal(401);
      expect(after.body.error.code).to.equal('unauthorized');
    }
  });

  it('works the same for a confidential client with client_secret_basic', async () => {
    const { client, clientAuth, tokens } = await authorizeInBrowser('client_secret_basic', tenantA.tenantId);
    expect((await call('GET', '/v1/agents', { key: tokens.access_token })).status).to.equal(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, tokens.access_token, insecure));
    expect((await call('GET', '/v1/agents', { key: tokens.access_token })).status).to.equal(401);
  });

  it('sends the browser back with access_denied and the state when the person denies', async () => {
    const registered = await registerClient('Denied client', 'none');
    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
    const state = oauth.generateRandomState();
    const url = await authorizationUrl(client, oauth.generateRandomCodeVerifier(), state);
    const callback = await consentInBrowser(browser, url, redirect.redirectUri, { ...person, workspaceId: tenantA.tenantId, decision: 'deny' });
    expect(callback.searchParams.get('error')).to.equal('access_denied');
    expect(callback.searchParams.get('state')).to.equal(state);
    expect(callback.searchParams.has('code')).to.equal(false);
    expect(() => oauth.validateAuthResponse(as, client, callback, state)).to.throw(oauth.AuthorizationResponseError);
  });
});
