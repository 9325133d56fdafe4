import { expect } from 'chai';
import type Koa from 'koa';
import { startSession } from '../api/oauth/sessions.js';
import { checkCredentials, upsertUser } from '../api/oauth/users.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { authorizeUrl, FormBrowser, formsOf, obtainTokens, pkcePair, postToken, registerPublicClient, signInToConsent, type ClientRegistration } from './support/oauth-browserless.js';
import { legacyPasswordHash, newOAuthUser } from './support/oauth-users.js';

/** `agent-platform user create` on an existing account: a new password signs the person out everywhere. */
describe('oauth: a changed password', function () {
  this.timeout(60_000);
  let client: ClientRegistration;
  before(async () => {
    client = await registerPublicClient();
  });

  function consentUrl(): string {
    return authorizeUrl({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's' });
  }

  /** Whether the browser's session is still signed in: the authorize page shows consent, not the sign-in form. */
  async function signedIn(browser: FormBrowser): Promise<boolean> {
    const page = await browser.get(consentUrl());
    expect(page.status).to.equal(200);
    return formsOf(page.body).some((fields) => fields.get('action') === 'consent');
  }

  it('ends every browser session and revokes every grant with its tokens, in every workspace; the same password restated keeps them', async () => {
    const first = await newTenant('password-change-a');
    const second = await newTenant('password-change-b');
    const user = await newOAuthUser([first.tenantId, second.tenantId], 'password-change');
    const here = await obtainTokens({ client, user, tenantId: first.tenantId });
    const there = await obtainTokens({ client, user, tenantId: second.tenantId });
    const browser = new FormBrowser();
    expect((await signInToConsent(browser, consentUrl(), user)).status).to.equal(200);
    expect(await signedIn(browser)).to.equal(true);

    // The same password, restated to add a workspace, changes nothing that was signed in (a hash of
    // older parameters is remade on the way).
    const { db } = testPlatform();
    const storedHash = async () => (await db.selectFrom('users').select('password_hash').where('id', '=', user.userId).executeTakeFirstOrThrow()).password_hash;
    await db.updateTable('users').set({ password_hash: legacyPasswordHash(user.password) }).where('id', '=', user.userId).execute();
    const third = await newTenant('password-change-c');
    const restated = await upsertUser(db, { email: user.email, password: user.password, tenantIds: [third.tenantId] });
    expect(restated).to.include({ created: false, passwordChanged: false });
    expect(await storedHash()).to.match(/^scrypt\$32768\$8\$3\$/);
    expect((await call('GET', '/v1/agents', { key: here.access_token })).status).to.equal(200);
    expect(await signedIn(browser)).to.equal(true);

    const changed = await upsertUser(db, { email: user.email, password: 'a brand new passphrase', tenantIds: [first.tenantId] });
    expect(changed).to.include({ created: false, passwordChanged: true });
    for (const tokens of [here, there]) {
      expect((await call('GET', '/v1/agents', { key: tokens.access_token })).status).to.equal(401);
      const refreshed = await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: tokens.refresh_token });
      expect(refreshed.status).to.equal(400);
      expect(refreshed.body.error).to.equal('invalid_grant');
    }
    expect(await signedIn(browser)).to.equal(false);
    const grants = await db.selectFrom('oauth_grants').select(['tenant_id', 'revoked_reason']).where('user_id', '=', user.userId).execute();
    expect(new Set(grants.map((grant) => grant.tenant_id))).to.deep.equal(new Set([first.tenantId, second.tenantId]));
    expect(grants.every((grant) => grant.revoked_reason === 'password_changed')).to.equal(true);

    // The new password signs in and authorizes again; the old one no longer does.
    const renewed = await obtainTokens({ client, user: { ...user, password: 'a brand new passphrase' }, tenantId: second.tenantId });
    expect((await call('GET', '/v1/agents', { key: renewed.access_token })).status).to.equal(200);
    const stale = await signInToConsent(new FormBrowser(), consentUrl(), user);
    expect(formsOf(stale.body).some((fields) => fields.get('action') === 'consent')).to.equal(false);
  });

  it('starts no session for a password checked just before the change committed', async () => {
    const tenant = await newTenant('password-change-race');
    const user = await newOAuthUser([tenant.tenantId], 'password-race');
    const { db, apiUrl } = testPlatform();
    // Sign-in's two steps, with the CLI's change between them.
    const checked = await checkCredentials(db, user.email, user.password);
    expect(checked).to.include({ id: user.userId });
    await upsertUser(db, { email: user.email, password: 'changed in between', tenantIds: [tenant.tenantId] });
    const unused = {} as Koa.Context; // not touched when no session starts
    expect(await startSession(unused, db, apiUrl, { secret: 'a'.repeat(43), user: undefined }, checked!.id, checked!.passwordHash)).to.equal(false);
    const sessions = await db.selectFrom('user_sessions').select('token_hash').where('user_id', '=', user.userId).execute();
    expect(sessions).to.deep.equal([]);
  });
});
