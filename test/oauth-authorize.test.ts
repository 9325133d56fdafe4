import { expect } from 'chai';
import type Koa from 'koa';
import { loadSession } from '../api/oauth/sessions.js';
import { newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import {
  authorizeUrl,
  decide,
  FormBrowser,
  formsOf,
  pkcePair,
  registerClient,
  registerPublicClient,
  signInToConsent,
  type ClientRegistration,
} from './support/oauth-browserless.js';
import { legacyPasswordHash, newOAuthUser, type TestUser } from './support/oauth-users.js';

/** The authorize endpoint: error pages, sign-in, the consent form and its protections. */
describe('oauth: authorize page', () => {
  let tenantA: Awaited<ReturnType<typeof newTenant>>;
  let tenantB: Awaited<ReturnType<typeof newTenant>>;
  let outsider: Awaited<ReturnType<typeof newTenant>>;
  let person: TestUser;
  let client: ClientRegistration;
  const { challenge } = pkcePair();

  before(async () => {
    tenantA = await newTenant('oauth-authz-a');
    tenantB = await newTenant('oauth-authz-b');
    outsider = await newTenant('oauth-authz-outsider');
    person = await newOAuthUser([tenantA.tenantId, tenantB.tenantId], 'authz');
    client = await registerPublicClient('http://127.0.0.1:9/callback?keep=1');
  });

  const validRequest = (overrides: Record<string, string | undefined> = {}) =>
    authorizeUrl({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      ...overrides,
    });

  function expectErrorPage(page: { status: number; headers: Headers; body: string }) {
    expect(page.status).to.equal(400);
    expect(page.headers.get('location')).to.equal(null);
    expect(page.headers.get('content-type')).to.include('text/html');
  }

  it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
    const browser = new FormBrowser();
    expectErrorPage(await browser.get(validRequest({ client_id: 'cli_unknown' })));
    expectErrorPage(await browser.get(validRequest({ client_id: undefined })));
    expectErrorPage(await browser.get(validRequest({ redirect_uri: 'https://evil.example/cb' })));
    expectErrorPage(await browser.get(validRequest({ redirect_uri: 'http://127.0.0.1:9/callback' }))); // not exactly the registered one
    expectErrorPage(await browser.get(`${validRequest()}&client_id=${client.clientId}`)); // repeated parameter
  });

  it("names a native app's redirect by its scheme, not the host it spells, and strips bidirectional controls from the client's name", async () => {
    const { body } = await registerClient({ client_name: 'Good\u202eApp', redirect_uris: ['x-evil://claude.ai/cb'], token_endpoint_auth_method: 'none' });
    expect(body.client_name).to.equal('Good App');
    const page = await new FormBrowser().get(
      authorizeUrl({ response_type: 'code', client_id: body.client_id, redirect_uri: 'x-evil://claude.ai/cb', code_challenge: challenge, code_challenge_method: 'plain', state: 's' }),
    );
    expectErrorPage(page);
    expect(page.body).to.include('Return to the app for x-evil://');
    expect(page.body).not.to.match(/Return to claude\.ai/);
  });

  it('shows invalid requests of a known client on the page, never redirecting, with a link back carrying the error, state and iss', async () => {
    const browser = new FormBrowser();
    for (const [overrides, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'], // a missing method means plain
      [{ code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'], // public clients need PKCE
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: 'x' }, 'unsupported_response_type'],
      [{ scope: 'api admin' }, 'invalid_scope'],
      [{ resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
    ] as const) {
      const page = await browser.get(validRequest(overrides));
      expectErrorPage(page); // RFC 9700 §4.11.2: no automatic redirect, or the endpoint is an open redirector
      expect(page.body).to.include(error);
      const link = /<a href="([^"]*)">Return to 127\.0\.0\.1:9 /.exec(page.body)?.[1];
      expect(link, JSON.stringify(overrides)).to.be.a('string');
      const location = new URL(link!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))));
      expect(`${location.origin}${location.pathname}`).to.equal('http://127.0.0.1:9/callback');
      expect(location.searchParams.get('keep'), 'the registered query is kept').to.equal('1');
      expect(location.searchParams.get('error'), JSON.stringify(overrides)).to.equal(error);
      expect(location.searchParams.get('state')).to.equal('xyz');
      expect(location.searchParams.get('iss')).to.equal(testPlatform().apiUrl);
      expect(location.searchParams.has('code')).to.equal(false);
    }
  });

  it('serves the pages unframeable, uncached and with a strict Content-Security-Policy', async () => {
    const page = await new FormBrowser().get(validRequest());
    expect(page.status).to.equal(200);
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).to.include("frame-ancestors 'none'");
    expect(csp).to.include("default-src 'none'");
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.body).to.include('Sign in');
  });

  it('sets the session cookie HttpOnly and SameSite=Lax (not Secure on a loopback http address)', async () => {
    const browser = new FormBrowser();
    const first = await fetch(validRequest());
    const anonymous = first.headers.getSetCookie()[0]!;
    expect(anonymous).to.match(/^agent_platform_session=[0-9A-Za-z]{43};/);
    expect(anonymous).to.include('HttpOnly').and.include('SameSite=Lax').and.not.include('Secure');

    const consent = await signInToConsent(browser, validRequest(), person);
    expect(consent.status).to.equal(200);
    const rows = await testPlatform().db.selectFrom('user_sessions').select('token_hash').where('user_id', '=', person.userId).execute();
    expect(rows.length).to.be.above(0);
    for (const row of rows) expect(row.token_hash).to.match(/^[0-9a-f]{64}$/);
  });

  it('makes the cookie Secure, with the __Host- prefix, outside loopback http', async () => {
    for (const publicUrl of ['https://platform.example.com', 'http://platform.example.com', 'https://127.0.0.1:8443']) {
      const setCookies: string[] = [];
      const ctx = { cookies: { get: () => undefined }, append: (_: string, value: string) => setCookies.push(value) } as unknown as Koa.Context;
      await loadSession(ctx, testPlatform().db, publicUrl);
      expect(setCookies[0], publicUrl).to.match(/^__Host-agent_platform_session=/);
      expect(setCookies[0]).to.include('; Secure').and.include('Path=/;');
    }
  });

  it('answers a wrong password with the sign-in form again and no session', async () => {
    const browser = new FormBrowser();
    const signIn = await browser.get(validRequest());
    const form = formsOf(signIn.body)[0]!;
    const wrong = await browser.post('/oauth/authorize', [...form, ['email', person.email], ['password', 'not the password']]);
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.include('Wrong e-mail or password');
    expect(wrong.headers.getSetCookie()).to.deep.equal([]);
  });

  it('stops checking passwords for an e-mail after 10 failed attempts (429), even the right one', async () => {
    const target = await newOAuthUser([tenantA.tenantId], 'guessed');
    const browser = new FormBrowser();
    const form = formsOf((await browser.get(validRequest())).body)[0]!;
    const attempt = (password: string) => browser.post('/oauth/authorize', [...form, ['email', target.email.toUpperCase()], ['password', password]]);
    for (let i = 0; i < 10; i++) expect((await attempt(`guess ${i}`)).status).to.equal(401);
    const blocked = await attempt(target.password);
    expect(blocked.status).to.equal(429);
    expect(Number(blocked.headers.get('retry-after'))).to.be.above(0);
  });

  it('does not redirect to any https address a stranger registered, whatever the request', async () => {
    const evil = await registerPublicClient('https://evil.example/');
    const page = await new FormBrowser().get(authorizeUrl({ client_id: evil.clientId, response_type: 'x' }));
    expectErrorPage(page);
    expect(page.body).to.include('evil.example');
  });

  it('judges at most 10 of 50 concurrent wrong sign-ins for one e-mail; the rest are throttled (429)', async () => {
    const target = await newOAuthUser([tenantA.tenantId], 'burst');
    const browser = new FormBrowser();
    const form = formsOf((await browser.get(validRequest())).body)[0]!;
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => browser.post('/oauth/authorize', [...form, ['email', target.email], ['password', `burst guess ${i}`]]).then((page) => page.status)),
    );
    expect(statuses.filter((status) => status === 401).length, statuses.join(' ')).to.be.at.most(10);
    expect(statuses.filter((status) => status !== 401 && status !== 429), statuses.join(' ')).to.deep.equal([]);
    expect((await browser.post('/oauth/authorize', [...form, ['email', target.email], ['password', target.password]])).status).to.equal(429);
  });

  it('does not count a right password against the limit', async () => {
    const target = await newOAuthUser([tenantA.tenantId], 'refund');
    for (let i = 0; i < 12; i++) expect((await signInToConsent(new FormBrowser(), validRequest(), target)).status, `sign-in ${i + 1}`).to.equal(200);
  });

  it("remakes a password hash of older scrypt parameters at the next right sign-in, and only then", async () => {
    const target = await newOAuthUser([tenantA.tenantId], 'rehash');
    const legacy = legacyPasswordHash(target.password);
    const { db } = testPlatform();
    const storedHash = async () => (await db.selectFrom('users').select('password_hash').where('id', '=', target.userId).executeTakeFirstOrThrow()).password_hash;
    await db.updateTable('users').set({ password_hash: legacy }).where('id', '=', target.userId).execute();

    const wrong = await signInToConsent(new FormBrowser(), validRequest(), { ...target, password: 'not the password' });
    expect(wrong.status).to.equal(401);
    expect(await storedHash()).to.equal(legacy);

    const right = await signInToConsent(new FormBrowser(), validRequest(), target);
    expect(formsOf(right.body).some((fields) => fields.get('action') === 'consent')).to.equal(true);
    const remade = await storedHash();
    expect(remade).to.match(/^scrypt\$32768\$8\$3\$/);
    // The remade hash is of the same password.
    const again = await signInToConsent(new FormBrowser(), validRequest(), target);
    expect(formsOf(again.body).some((fields) => fields.get('action') === 'consent')).to.equal(true);
    expect(await storedHash()).to.equal(remade);
  });

  it('names the client, its redirect host and offers exactly the workspaces of the user', async () => {
    const named = await registerClient({ client_name: '<b>Evil & Co</b>', redirect_uris: ['https://callback.example.net/cb'], token_endpoint_auth_method: 'none' });
    const consent = await signInToConsent(
      new FormBrowser(),
      authorizeUrl({ response_type: 'code', client_id: named.body.client_id, code_challenge: challenge, code_challenge_method: 'S256' }),
      person,
    );
    expect(consent.status).to.equal(200);
    expect(consent.body).to.include('&#60;b&#62;Evil &#38; Co&#60;/b&#62;').and.not.include('<b>Evil');
    expect(consent.body).to.include('callback.example.net');
    const options = [...consent.body.matchAll(/<option value="([^"]+)">/g)].map((match) => match[1]);
    expect(options.sort()).to.deep.equal([tenantA.tenantId, tenantB.tenantId].sort());
    expect(consent.headers.get('content-security-policy')).to.include('form-action \'self\' https://callback.example.net');
  });

  it('refuses a consent form without the CSRF token of its session', async () => {
    const browser = new FormBrowser();
    const consent = await signInToConsent(browser, validRequest(), person);
    const form = formsOf(consent.body).find((fields) => fields.get('action') === 'consent')!;

    for (const token of [undefined, 'forged', csrfOfAnotherSession(await anotherConsentPage())]) {
      const fields = new Map(form);
      if (token === undefined) fields.delete('csrf_token');
      else fields.set('csrf_token', token);
      const posted = await browser.post('/oauth/authorize', [...fields, ['tenant_id', tenantA.tenantId], ['decision', 'approve']]);
      expect(posted.status, String(token)).to.equal(403);
      expect(posted.headers.get('location')).to.equal(null);
    }
    // A cross-site form post carries no cookie at all (SameSite=Lax): also refused.
    const cookieless = await new FormBrowser().post('/oauth/authorize', [...form, ['tenant_id', tenantA.tenantId], ['decision', 'approve']]);
    expect(cookieless.status).to.equal(403);
    const grants = await testPlatform().db.selectFrom('oauth_grants').select('id').where('client_id', '=', client.clientId).execute();
    expect(grants).to.deep.equal([]);
  });

  it('protects the sign-in form against CSRF too, and signs out', async () => {
    const browser = new FormBrowser();
    const form = formsOf((await browser.get(validRequest())).body)[0]!;
    form.delete('csrf_token');
    const forged = await browser.post('/oauth/authorize', [...form, ['email', person.email], ['password', person.password]]);
    expect(forged.status).to.equal(403);
    expect(forged.headers.getSetCookie()).to.deep.equal([]);

    const consent = await signInToConsent(browser, validRequest(), person);
    const signOut = formsOf(consent.body).find((fields) => fields.get('action') === 'sign_out')!;
    const signedOut = await browser.post('/oauth/authorize', signOut);
    expect(signedOut.status).to.equal(303);
    const next = await browser.get(new URL(signedOut.headers.get('location')!, `${testPlatform().apiUrl}/oauth/`).href);
    expect(next.body).to.include('Sign in to agent-platform');
  });

  it('checks the chosen workspace on the server: a workspace the user is not in is refused', async () => {
    const browser = new FormBrowser();
    const consent = await signInToConsent(browser, validRequest(), person);
    const refused = await decide(browser, consent, 'approve', outsider.tenantId);
    expect(refused.status).to.equal(403);
    expect(refused.headers.get('location')).to.equal(null);

    const approved = await decide(browser, consent, 'approve', tenantB.tenantId);
    expect(approved.status).to.equal(303);
    const location = new URL(approved.headers.get('location')!);
    expect(location.searchParams.get('code')).to.match(/^[0-9A-Za-z]{43}$/);
    expect(location.searchParams.get('state')).to.equal('xyz');
    expect(location.searchParams.get('iss')).to.equal(testPlatform().apiUrl);
    expect(location.searchParams.get('keep')).to.equal('1');
  });

  it('tells a user without a workspace so, instead of offering consent', async () => {
    const loner = await newOAuthUser([tenantA.tenantId], 'loner');
    await testPlatform().db.deleteFrom('memberships').where('user_id', '=', loner.userId).execute();
    const page = await signInToConsent(new FormBrowser(), validRequest(), loner);
    expect(page.status).to.equal(403);
    expect(page.body).to.include('not a member of any workspace');
  });

  /** A consent page of a different browser, whose CSRF token must not work in ours. */
  async function anotherConsentPage() {
    return signInToConsent(new FormBrowser(), validRequest(), person);
  }
});

function csrfOfAnotherSession(page: { body: string }): string {
  return formsOf(page.body).find((fields) => fields.get('action') === 'consent')!.get('csrf_token')!;
}
