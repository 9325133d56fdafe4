import { expect } from 'chai';
import { testPlatform } from './support/global.js';
import { REGISTRATIONS_PER_ADDRESS } from '../api/oauth/rate-limit.js';
import { registerClient } from './support/oauth-browserless.js';
import { fetchFrom, randomLoopbackAddress, REGISTRATION_ADDRESS } from './support/oauth-local-address.js';

/** Discovery (RFC 8414) and dynamic client registration (RFC 7591). */
describe('oauth: metadata and dynamic client registration', () => {
  it('serves the authorization server metadata', async () => {
    const response = await fetch(`${testPlatform().apiUrl}/.well-known/oauth-authorization-server`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('access-control-allow-origin')).to.equal('*');
    const metadata: any = await response.json();
    expect(metadata).to.deep.include({
      issuer: testPlatform().apiUrl,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      scopes_supported: ['api'],
    });
    expect(metadata.registration_endpoint).to.equal(`${testPlatform().apiUrl}/oauth/register`);
    expect(metadata.revocation_endpoint).to.equal(`${testPlatform().apiUrl}/oauth/revoke`);
  });

  it('answers 404 JSON to any other /.well-known/ address', async () => {
    const response = await fetch(`${testPlatform().apiUrl}/.well-known/openid-configuration`);
    expect(response.status).to.equal(404);
    expect(response.headers.get('content-type')).to.include('application/json');
    expect(((await response.json()) as any).error.code).to.equal('not_found');
  });

  it('registers a public client: 201 with a client_id and no secret', async () => {
    const { status, body } = await registerClient({
      client_name: 'Public',
      redirect_uris: ['http://127.0.0.1:8765/callback', 'https://app.example.com/cb', 'com.example.app:/oauth'],
      token_endpoint_auth_method: 'none',
    });
    expect(status).to.equal(201);
    expect(body.client_id).to.match(/^cli_/);
    expect(body).to.not.have.property('client_secret');
    expect(body).to.include({ client_name: 'Public', token_endpoint_auth_method: 'none' });
    expect(body.redirect_uris).to.have.length(3);
  });

  it('gives a confidential client a secret, stored only as a hash', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post']) {
      const { status, body } = await registerClient({ client_name: 'Confidential', redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: method });
      expect(status).to.equal(201);
      expect(body.client_secret).to.match(/^svc_cs_[0-9A-Za-z]{43}$/);
      expect(body.client_secret_expires_at).to.equal(0);
      const row = await testPlatform().db.selectFrom('oauth_clients').select('secret_hash').where('id', '=', body.client_id).executeTakeFirstOrThrow();
      expect(row.secret_hash).to.match(/^[0-9a-f]{64}$/);
    }
    // RFC 7591's default method is client_secret_basic.
    expect((await registerClient({ redirect_uris: ['https://app.example.com/cb'] })).body.token_endpoint_auth_method).to.equal('client_secret_basic');
  });

  it('ignores a client-chosen client_id, client_secret, trust flags and unknown metadata', async () => {
    const { status, body } = await registerClient({
      client_id: 'my-own-id',
      client_secret: 'my-own-secret',
      client_name: 'Chooser',
      redirect_uris: ['https://app.example.com/cb'],
      token_endpoint_auth_method: 'none',
      trusted: true,
      skip_consent: true,
      logo_uri: 'https://app.example.com/logo.png',
    });
    expect(status).to.equal(201);
    expect(body.client_id).to.not.equal('my-own-id');
    expect(body).to.not.have.property('client_secret');
    expect(body).to.not.have.any.keys('trusted', 'skip_consent', 'logo_uri');
    const row = await testPlatform().db.selectFrom('oauth_clients').selectAll().where('id', '=', 'my-own-id').executeTakeFirst();
    expect(row).to.equal(undefined);
  });

  it('refuses unsafe redirect URIs with invalid_redirect_uri', async () => {
    for (const uri of [
      'https://app.example.com/cb#fragment',
      'http://app.example.com/cb',
      'javascript:alert(1)',
      'data:text/html,hi',
      'https://user:pass@app.example.com/cb',
      '/relative/callback',
      'https://例え.jp/cb',
      'https://app.example.com/rückruf',
      'https://app.example.com/c b',
    ]) {
      const { status, body } = await registerClient({ client_name: 'Bad', redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(status, uri).to.equal(400);
      expect(body.error, uri).to.equal('invalid_redirect_uri');
    }
    expect((await registerClient({ client_name: 'None', token_endpoint_auth_method: 'none' })).body.error).to.equal('invalid_redirect_uri');
    // Loopback http is a native app's local listener, and allowed.
    for (const uri of ['http://localhost:3000/cb', 'http://[::1]:3000/cb', 'http://127.0.0.1/cb', 'https://xn--r8jz45g.jp/r%C3%BCckruf']) {
      expect((await registerClient({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status, uri).to.equal(201);
    }
  });

  it('refuses unsupported methods, grant types and malformed metadata with invalid_client_metadata', async () => {
    for (const metadata of [
      { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
      { redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] },
      { redirect_uris: ['https://a.example/cb'], response_types: ['token'] },
      { redirect_uris: ['https://a.example/cb'], client_name: 42 },
    ]) {
      const { status, body } = await registerClient(metadata);
      expect(status, JSON.stringify(metadata)).to.equal(400);
      expect(body.error).to.equal('invalid_client_metadata');
    }
    const notJson = await fetchFrom(REGISTRATION_ADDRESS)(`${testPlatform().apiUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).to.equal(400);
    expect(((await notJson.json()) as any).error).to.equal('invalid_client_metadata');
  });

  it('refuses a registration body over 16 KiB with 413', async () => {
    const { status, body } = await registerClient({ redirect_uris: ['https://a.example/cb'], padding: 'x'.repeat(20_000) });
    expect(status).to.equal(413);
    expect(body.error).to.equal('invalid_request');
  });

  it('limits registrations per client address (429 with Retry-After)', async () => {
    // From an address of its own, with the limit lowered for the test, so it touches no other test.
    const sendFrom = (address: string) =>
      fetchFrom(address)(`${testPlatform().apiUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'none' }),
      });
    const address = randomLoopbackAddress();
    const send = () => sendFrom(address);
    const defaultLimit = REGISTRATIONS_PER_ADDRESS.limit;
    REGISTRATIONS_PER_ADDRESS.limit = 3;
    try {
      for (let i = 0; i < 3; i++) expect((await send()).status).to.equal(201);
      const limited = await send();
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
      expect(((await limited.json()) as any).error).to.be.a('string');
      // Other addresses are not affected.
      expect((await sendFrom(randomLoopbackAddress())).status).to.equal(201);
    } finally {
      REGISTRATIONS_PER_ADDRESS.limit = defaultLimit;
    }
  });
});

