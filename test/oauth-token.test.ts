import { expect } from 'chai';
import { oauthClock } from '../api/oauth/clock.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import {
  obtainCode,
  obtainTokens,
  pkcePair,
  postToken,
  registerClient,
  registerPublicClient,
  type ClientRegistration,
} from './support/oauth-browserless.js';
import { newOAuthUser, type TestUser } from './support/oauth-users.js';

/** The token endpoint: code exchange, refresh rotation, and everything that must fail. */
describe('oauth: token endpoint', () => {
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let person: TestUser;
  let client: ClientRegistration;

  before(async () => {
    tenant = await newTenant('oauth-token');
    person = await newOAuthUser([tenant.tenantId], 'token');
    client = await registerPublicClient();
  });

  afterEach(() => {
    oauthClock.now = () => new Date();
  });

  /** Moves the server's clock forward. */
  function advanceClock(seconds: number) {
    oauthClock.now = () => new Date(Date.now() + seconds * 1000);
  }

  function expectOAuthError(response: { status: number; headers: Headers; body: any }, error: string, status = 400) {
    expect(response.status, JSON.stringify(response.body)).to.equal(status);
    expect(response.body.error).to.equal(error);
    expect(response.body.error_description).to.be.a('string');
    expect(response.headers.get('cache-control')).to.equal('no-store');
  }

  const exchange = (code: string, verifier: string | undefined, overrides: Record<string, string | undefined> = {}) =>
    postToken({ grant_type: 'authorization_code', client_id: client.clientId, code, redirect_uri: client.redirectUri, code_verifier: verifier, ...overrides });

  it('exchanges a code once, with no-store caching', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode({ client, user: person, challenge });
    const response = await exchange(code, verifier);
    expect(response.status).to.equal(200);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    expect(response.body).to.include({ token_type: 'Bearer', expires_in: 3600, scope: 'api' });
    const stored = await testPlatform().db.selectFrom('oauth_codes').select('code_hash').execute();
    expect(stored.map((row) => row.code_hash)).to.not.include(code);
  });

  it('answers a replayed code with invalid_grant and revokes every token issued from it', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode({ client, user: person, challenge });
    const first = await exchange(code, verifier);
    expect(first.status).to.equal(200);
    expect((await call('GET', '/v1/agents', { key: first.body.access_token })).status).to.equal(200);

    expectOAuthError(await exchange(code, verifier), 'invalid_grant');
    expect((await call('GET', '/v1/agents', { key: first.body.access_token })).status).to.equal(401);
    expectOAuthError(await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: first.body.refresh_token }), 'invalid_grant');
  });

  it('checks the PKCE verifier: a wrong or missing one is invalid_grant', async () => {
    for (const verifier of [pkcePair().verifier, undefined, 'short']) {
      const { challenge } = pkcePair();
      const code = await obtainCode({ client, user: person, challenge });
      expectOAuthError(await exchange(code, verifier), 'invalid_grant');
    }
  });

  it('refuses a redirect_uri at the token endpoint that differs from the authorize request', async () => {
    const twoUris = await registerClient({ redirect_uris: ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'], token_endpoint_auth_method: 'none' });
    const registration = { clientId: twoUris.body.client_id, redirectUri: 'http://127.0.0.1:9/a' };
    for (const redirectUri of ['http://127.0.0.1:9/b', undefined]) {
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode({ client: registration, user: person, challenge });
      const response = await postToken({ grant_type: 'authorization_code', client_id: registration.clientId, code, redirect_uri: redirectUri, code_verifier: verifier });
      expectOAuthError(response, 'invalid_grant');
    }
  });

  it('lets a code expire after 60 seconds', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode({ client, user: person, challenge });
    advanceClock(61);
    expectOAuthError(await exchange(code, verifier), 'invalid_grant');
  });

  it('refuses a code to another client, and unknown clients with invalid_client', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode({ client, user: person, challenge });
    const other = await registerPublicClient();
    expectOAuthError(await exchange(code, verifier, { client_id: other.clientId }), 'invalid_grant');
    expectOAuthError(await exchange('whatever', verifier, { client_id: 'cli_unknown' }), 'invalid_client', 401);
    expectOAuthError(await exchange('whatever', verifier, { client_id: undefined }), 'invalid_client', 401);
  });

  it('authenticates confidential clients by their registered method only', async () => {
    const { body } = await registerClient({ redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'client_secret_post' });
    const confidential = { clientId: body.client_id, redirectUri: 'http://127.0.0.1:9/callback' };
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`${body.client_id}:${secret}`).toString('base64')}` });

    // A confidential client may skip PKCE (it is still accepted).
    let code = await obtainCode({ client: confidential, user: person });
    const base = { grant_type: 'authorization_code', code, redirect_uri: confidential.redirectUri };
    expectOAuthError(await postToken({ ...base, client_id: confidential.clientId }), 'invalid_client', 401); // as a public client
    expectOAuthError(await postToken({ ...base, client_id: confidential.clientId, client_secret: 'wrong' }), 'invalid_client', 401);
    const viaBasic = await postToken(base, { headers: basic(body.client_secret) }); // not its method
    expectOAuthError(viaBasic, 'invalid_client', 401);
    expect(viaBasic.headers.get('www-authenticate')).to.match(/^Basic /);

    // A NUL in Basic credentials, raw or form-encoded, is malformed credentials, not a server error.
    for (const credentials of ['\0a:b', '%00:x', `${body.client_id}:%00`]) {
      for (const path of ['/oauth/token', '/oauth/revoke']) {
        const malformed = await postToken(path === '/oauth/token' ? base : { token: 'whatever' }, { path, headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } });
        expectOAuthError(malformed, 'invalid_client', 401);
        expect(malformed.headers.get('www-authenticate'), `${path} ${JSON.stringify(credentials)}`).to.match(/^Basic /);
      }
    }

    code = await obtainCode({ client: confidential, user: person });
    const ok = await postToken({ ...base, code, client_id: confidential.clientId, client_secret: body.client_secret });
    expect(ok.status).to.equal(200);
  });

  it('rotates refresh tokens; reusing an old one revokes the whole grant', async () => {
    const tokens = await obtainTokens({ client, user: person });
    const refresh = (token: string) => postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: token });

    const second = await refresh(tokens.refresh_token);
    expect(second.status).to.equal(200);
    expect(second.body.refresh_token).to.not.equal(tokens.refresh_token);
    const third = await refresh(second.body.refresh_token);
    expect(third.status).to.equal(200);

    expectOAuthError(await refresh(tokens.refresh_token), 'invalid_grant');
    // The newest tokens, never reused themselves, are gone with the grant.
    expect((await call('GET', '/v1/agents', { key: third.body.access_token })).status).to.equal(401);
    expectOAuthError(await refresh(third.body.refresh_token), 'invalid_grant');
  });

  it('lets only one of several parallel refreshes with the same token win', async () => {
    const tokens = await obtainTokens({ client, user: person });
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.refresh_token })),
    );
    expect(results.map((result) => result.status).sort()).to.deep.equal([200, 400, 400, 400]);
    for (const loser of results.filter((result) => result.status === 400)) expect(loser.body.error).to.equal('invalid_grant');
  });

  it('lets only one of two parallel exchanges of the same code win, and the other revokes it', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode({ client, user: person, challenge });
    const results = await Promise.all([exchange(code, verifier), exchange(code, verifier)]);
    expect(results.map((result) => result.status).sort()).to.deep.equal([200, 400]);
    const winner = results.find((result) => result.status === 200)!;
    expect((await call('GET', '/v1/agents', { key: winner.body.access_token })).status).to.equal(401);
  });

  it('refuses refresh tokens of another client, expired ones, and unknown grant types', async () => {
    const tokens = await obtainTokens({ client, user: person });
    const other = await registerPublicClient();
    expectOAuthError(await postToken({ grant_type: 'refresh_token', client_id: other.clientId, refresh_token: tokens.refresh_token }), 'invalid_grant');
    expectOAuthError(await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.refresh_token, scope: 'admin' }), 'invalid_scope');
    expectOAuthError(await postToken({ grant_type: 'client_credentials', client_id: client.clientId }), 'unsupported_grant_type');
    expectOAuthError(await postToken({ client_id: client.clientId }), 'invalid_request');

    advanceClock(30 * 24 * 3600 + 1);
    expectOAuthError(await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.refresh_token }), 'invalid_grant');
  });

  it('refuses a request body that is not a form', async () => {
    const response = await fetch(`${testPlatform().apiUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expect(response.status).to.equal(400);
    expect(((await response.json()) as any).error).to.equal('invalid_request');
  });

  it('answers revocation with 200 whatever the token, and revokes the grant of a real one', async () => {
    const revoke = (token: string, clientId = client.clientId) => postToken({ token, client_id: clientId }, { path: '/oauth/revoke' });
    for (const token of ['svc_at_unknown', 'garbage', 'svc_rt_x']) {
      const response = await revoke(token);
      expect(response.status).to.equal(200);
    }
    expect((await postToken({ token: 'x', client_id: 'cli_unknown' }, { path: '/oauth/revoke' })).status).to.equal(401);

    const tokens = await obtainTokens({ client, user: person });
    // Another client cannot revoke it (and is not told so).
    const other = await registerPublicClient();
    expect((await revoke(tokens.access_token, other.clientId)).status).to.equal(200);
    expect((await call('GET', '/v1/agents', { key: tokens.access_token })).status).to.equal(200);

    expect((await revoke(tokens.access_token)).status).to.equal(200);
    expect((await call('GET', '/v1/agents', { key: tokens.access_token })).status).to.equal(401);
    expectOAuthError(await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.refresh_token }), 'invalid_grant');
  });
});
