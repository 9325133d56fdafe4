import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { oauthClock } from '../api/oauth/clock.js';
import { sha256Hex } from '../db/secrets.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { launchChromium } from './support/oauth-browser.js';
import { FormBrowser, formsOf, obtainTokens, registerPublicClient, type ClientRegistration } from './support/oauth-browserless.js';
import { newOAuthUser } from './support/oauth-users.js';

/** Screenshots of the pages the tests drive, for a person to look at (gitignored). */
const OUTPUT_DIR = resolve('test-output', 'invites');

/** /v1/invites and the invite link's page: single use, expiry, revocation, and joining in a real browser. */
describe('invites', () => {
  let browser: Browser;
  let client: ClientRegistration;
  let tenant: TestTenant;

  before(async () => {
    browser = await launchChromium();
    client = await registerPublicClient();
    tenant = await newTenant('invites');
    await mkdir(OUTPUT_DIR, { recursive: true });
  });

  after(async () => {
    await browser?.close();
  });

  afterEach(() => {
    oauthClock.now = () => new Date();
  });

  function uniqueEmail(name: string): string {
    return `${name}-${Math.random().toString(36).slice(2, 10)}@example.test`;
  }

  async function invite(body: Record<string, unknown>, key = tenant.key) {
    const created = await call('POST', '/v1/invites', { key, body });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { invite: { id: string; email: string; role: string; status: string; expires_at: string }; url: string };
  }

  async function roleOf(email: string, workspace = tenant): Promise<string | undefined> {
    const listed = await call('GET', '/v1/members?limit=200', { key: workspace.key });
    return listed.body.members.find((m: { email: string }) => m.email === email)?.role;
  }

  async function inviteStatus(id: string): Promise<string> {
    const listed = await call('GET', '/v1/invites?limit=200', { key: tenant.key });
    return listed.body.invites.find((i: { id: string }) => i.id === id).status;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: resolve(OUTPUT_DIR, `${name}.png`), fullPage: true });
  }

  it('answers the link once, stores only its hash, and lists the invite as pending for 7 days', async () => {
    const email = uniqueEmail('Pending').toUpperCase();
    const before = Date.now();
    const created = await invite({ email });
    expect(created.invite).to.include({ email: email.toLowerCase(), role: 'member', status: 'pending' });
    const days = (Date.parse(created.invite.expires_at) - before) / 86_400_000;
    expect(days).to.be.within(6.99, 7.01);
    const match = new RegExp(`^${testPlatform().apiUrl}/invites/([A-Za-z0-9]{43})$`).exec(created.url);
    expect(match, created.url).to.not.equal(null);
    const row = await testPlatform().db.selectFrom('invites').select('token_hash').where('id', '=', created.invite.id).executeTakeFirstOrThrow();
    expect(row.token_hash).to.equal(sha256Hex(match![1]!));
    const listed = await call('GET', '/v1/invites?limit=200', { key: tenant.key });
    const item = listed.body.invites.find((i: { id: string }) => i.id === created.invite.id);
    expect(item).to.deep.equal(created.invite);
    expect(JSON.stringify(listed.body)).to.not.include(match![1]);
  });

  it('lets a new person create their account on the invite page and join with the role (Chromium)', async () => {
    const email = uniqueEmail('newcomer');
    const password = 'a long enough password 1';
    const { url } = await invite({ email, role: 'admin' });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const opened = await page.goto(url);
      expect(opened!.status()).to.equal(200);
      expect(opened!.headers()['content-security-policy']).to.include("default-src 'none'");
      expect(opened!.headers()['x-frame-options']).to.equal('DENY');
      expect(await page.textContent('h1')).to.equal(`Join ${(await workspaceName())}`);
      expect(await page.inputValue('input[name=email]')).to.equal(email);
      await screenshot(page, '1-create-account');
      await page.fill('input[name=password]', password);
      await page.fill('input[name=password_again]', password);
      await page.click('button[type=submit]');
      await page.waitForSelector('button.primary:has-text("Join")');
      await screenshot(page, '2-join');
      expect(await page.textContent('button.primary')).to.match(/^Join /);
      await page.click('button.primary');
      await page.waitForSelector('text=Welcome to');
      expect(await page.textContent('main')).to.include(`You joined ${await workspaceName()} as admin`);
      await screenshot(page, '3-joined');
    } finally {
      await context.close();
    }
    expect(await roleOf(email)).to.equal('admin');
    // The account is a real one: it signs in to OAuth, and its token manages members (it is an admin).
    const user = await testPlatform().db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    const { access_token: token } = await obtainTokens({ client, user: { userId: user.id, email, password } });
    expect((await call('GET', '/v1/members', { key: token })).status).to.equal(200);
  });

  it('lets an existing account sign in on the invite page and join (Chromium)', async () => {
    const elsewhere = await newTenant('invites-elsewhere');
    const person = await newOAuthUser([elsewhere.tenantId], 'existing');
    const created = await invite({ email: person.email });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(created.url);
      expect(await page.$('input[name=password_again]')).to.equal(null);
      await screenshot(page, '4-sign-in');
      await page.fill('input[name=password]', person.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('button.primary:has-text("Join")');
      await page.click('button.primary');
      await page.waitForSelector('text=Welcome to');
      await screenshot(page, '5-joined-existing');
      // The link works once: opened again, it says so.
      const again = await page.goto(created.url);
      expect(again!.status()).to.equal(410);
      expect(await page.textContent('h1')).to.equal('This invite was already used');
      await screenshot(page, '6-used');
    } finally {
      await context.close();
    }
    expect(await roleOf(person.email)).to.equal('member');
    expect(await roleOf(person.email, elsewhere)).to.equal('owner');
    expect(await inviteStatus(created.invite.id)).to.equal('accepted');
  });

  /** Signs the form browser in on the invite page and answers the join page. */
  async function signedInJoinPage(browserless: FormBrowser, url: string, person: { email: string; password: string }) {
    const signInPage = await browserless.get(url);
    const form = formsOf(signInPage.body)[0]!;
    const signedIn = await browserless.post(url, [...form, ['email', person.email], ['password', person.password]]);
    expect(signedIn.status, signedIn.body).to.equal(303);
    return browserless.get(url);
  }

  it('is single-use: a second acceptance, even one already on the join page, finds it used', async () => {
    const person = await newOAuthUser([(await newTenant('invites-single')).tenantId], 'single');
    const { url, invite: created } = await invite({ email: person.email });
    const first = new FormBrowser();
    const second = new FormBrowser();
    const pages = [await signedInJoinPage(first, url, person), await signedInJoinPage(second, url, person)];
    const accepts = pages.map((p) => formsOf(p.body).find((f) => f.get('action') === 'accept')!);
    expect((await first.post(url, accepts[0]!)).status).to.equal(200);
    const late = await second.post(url, accepts[1]!);
    expect(late.status).to.equal(410);
    expect(late.body).to.include('This invite was already used');
    expect(await inviteStatus(created.id)).to.equal('accepted');
  });

  it('expires: after its days the link shows that it expired, and nobody can join with it', async () => {
    const email = uniqueEmail('late');
    const { url, invite: created } = await invite({ email, expires_in_days: 1 });
    const browserless = new FormBrowser();
    const page = await browserless.get(url);
    expect(page.status).to.equal(200);
    const form = formsOf(page.body).find((f) => f.get('action') === 'create_account')!;
    oauthClock.now = () => new Date(Date.now() + 86_401_000);
    const expired = await browserless.get(url);
    expect(expired.status).to.equal(410);
    expect(expired.body).to.include('This invite has expired');
    const posted = await browserless.post(url, [...form, ['password', 'a long enough password'], ['password_again', 'a long enough password']]);
    expect(posted.status).to.equal(410);
    expect(await inviteStatus(created.id)).to.equal('expired');
    expect((await call('DELETE', `/v1/invites/${created.id}`, { key: tenant.key })).status).to.equal(409);
    oauthClock.now = () => new Date();
    expect(await testPlatform().db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).to.equal(undefined);
  });

  it('can be revoked: the link then says so, and revoking again is a 409', async () => {
    const person = await newOAuthUser([(await newTenant('invites-revoked')).tenantId], 'revoked');
    const { url, invite: created } = await invite({ email: person.email });
    const browserless = new FormBrowser();
    const join = await signedInJoinPage(browserless, url, person);
    const accept = formsOf(join.body).find((f) => f.get('action') === 'accept')!;
    const revoked = await call('DELETE', `/v1/invites/${created.id}`, { key: tenant.key });
    expect(revoked.body).to.deep.equal({ deleted: true, id: created.id });
    const posted = await browserless.post(url, accept);
    expect(posted.status).to.equal(410);
    expect(posted.body).to.include('This invite was revoked');
    expect((await browserless.get(url)).status).to.equal(410);
    expect(await roleOf(person.email)).to.equal(undefined);
    const again = await call('DELETE', `/v1/invites/${created.id}`, { key: tenant.key });
    expect(again.status).to.equal(409);
    expect(again.body.error.message).to.include('revoked');
  });

  it('is for the invited address only: another signed-in account cannot use it', async () => {
    const intruder = await newOAuthUser([(await newTenant('invites-intruder')).tenantId], 'intruder');
    const { url, invite: created } = await invite({ email: uniqueEmail('addressee') });
    const browserless = new FormBrowser();
    const page = await browserless.get(url);
    const csrf = formsOf(page.body)[0]!.get('csrf_token')!;
    // The page offers the invited address's account only; a sign-in as someone else is posted by hand.
    const signedIn = await browserless.post(url, [['csrf_token', csrf], ['action', 'sign_in'], ['email', intruder.email], ['password', intruder.password]]);
    expect(signedIn.status, signedIn.body).to.equal(303);
    const wrong = await browserless.get(url);
    expect(wrong.status).to.equal(403);
    expect(wrong.body).to.include('This invite is for someone else');
    expect(formsOf(wrong.body).some((f) => f.get('action') === 'accept')).to.equal(false);
    const forged = await browserless.post(url, [['csrf_token', formsOf(wrong.body)[0]!.get('csrf_token')!], ['action', 'accept']]);
    expect(forged.status).to.equal(403);
    expect(await roleOf(intruder.email)).to.equal(undefined);
    expect(await inviteStatus(created.id)).to.equal('pending');
  });

  it('refuses a form without the page’s CSRF token, and shows a clear page for an unknown link', async () => {
    const person = await newOAuthUser([(await newTenant('invites-csrf')).tenantId], 'csrf');
    const { url } = await invite({ email: person.email });
    const browserless = new FormBrowser();
    await signedInJoinPage(browserless, url, person);
    const forged = await browserless.post(url, [['csrf_token', 'x'.repeat(43)], ['action', 'accept']]);
    expect(forged.status).to.equal(403);
    expect(await roleOf(person.email)).to.equal(undefined);
    const unknown = await browserless.get(`/invites/${'A'.repeat(43)}`);
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include('This invite link is not valid');
    expect(unknown.headers.get('cache-control')).to.equal('no-store');
  });

  it('refuses to invite a member (409) or a malformed address (400), and re-inviting replaces the pending invite', async () => {
    const member = await newOAuthUser([tenant.tenantId], 'already');
    const conflict = await call('POST', '/v1/invites', { key: tenant.key, body: { email: member.email.toUpperCase() } });
    expect(conflict.status).to.equal(409);
    expect(conflict.body.error.message).to.equal(`${member.email} is already a member of this workspace`);
    expect((await call('POST', '/v1/invites', { key: tenant.key, body: { email: 'not an address' } })).status).to.equal(400);
    expect((await call('POST', '/v1/invites', { key: tenant.key, body: { email: 'a@b.test', role: 'king' } })).status).to.equal(400);
    expect((await call('POST', '/v1/invites', { key: tenant.key, body: { email: 'a@b.test', expires_in_days: 31 } })).status).to.equal(400);
    const email = uniqueEmail('twice');
    const first = await invite({ email });
    const second = await invite({ email, role: 'admin' });
    expect(await inviteStatus(first.invite.id)).to.equal('revoked');
    expect(await inviteStatus(second.invite.id)).to.equal('pending');
    expect((await new FormBrowser().get(first.url)).status).to.equal(410);
  });

  it("lets only owners revoke or replace an owner's pending invite (403 for an admin)", async () => {
    const workspace = await newTenant('invites-owner-invite');
    await newOAuthUser([workspace.tenantId], 'invites-owner'); // the first member is the owner
    const admin = await newOAuthUser([workspace.tenantId], 'invites-admin');
    const members = await call('GET', '/v1/members', { key: workspace.key });
    const adminId = members.body.members.find((m: { email: string }) => m.email === admin.email).id;
    expect((await call('PATCH', `/v1/members/${adminId}`, { key: workspace.key, body: { role: 'admin' } })).status).to.equal(200);
    const adminToken = (await obtainTokens({ client, user: admin, tenantId: workspace.tenantId })).access_token;
    const email = uniqueEmail('future-owner');
    const ownerInvite = await invite({ email, role: 'owner' }, workspace.key);
    const statusOf = async (id: string) =>
      (await call('GET', '/v1/invites?limit=200', { key: workspace.key })).body.invites.find((i: { id: string }) => i.id === id).status;

    const revoked = await call('DELETE', `/v1/invites/${ownerInvite.invite.id}`, { key: adminToken });
    expect(revoked.status).to.equal(403);
    expect(revoked.body.error).to.include({ code: 'forbidden', message: "only an owner may revoke an owner's invite" });
    for (const role of ['member', 'admin']) {
      const replaced = await call('POST', '/v1/invites', { key: adminToken, body: { email, role } });
      expect(replaced.status, role).to.equal(403);
      expect(replaced.body.error.message).to.equal("only an owner may replace an owner's invite");
    }
    // Nothing half-done: the owner invite is still pending and no other invite was made.
    expect(await statusOf(ownerInvite.invite.id)).to.equal('pending');
    const listed = await call('GET', '/v1/invites?limit=200', { key: workspace.key });
    expect(listed.body.invites.filter((i: { email: string }) => i.email === email)).to.have.length(1);
    expect((await new FormBrowser().get(ownerInvite.url)).status).to.equal(200);

    // An admin still revokes and replaces invites for other roles; an owner (here the key) the owner's.
    const memberInvite = await invite({ email: uniqueEmail('plain') }, adminToken);
    expect((await invite({ email: memberInvite.invite.email, role: 'admin' }, adminToken)).invite.role).to.equal('admin');
    expect(await statusOf(memberInvite.invite.id)).to.equal('revoked');
    const other = await invite({ email: uniqueEmail('other') }, adminToken);
    expect((await call('DELETE', `/v1/invites/${other.invite.id}`, { key: adminToken })).status).to.equal(200);
    const replacedByOwner = await invite({ email, role: 'member' }, workspace.key);
    expect(await statusOf(ownerInvite.invite.id)).to.equal('revoked');
    expect((await call('DELETE', `/v1/invites/${replacedByOwner.invite.id}`, { key: adminToken })).status).to.equal(200);
  });

  it("answers 404 for another workspace's invite ids, and lists only the workspace's own invites", async () => {
    const other = await newTenant('invites-other');
    const { invite: theirs } = await invite({ email: uniqueEmail('theirs') }, other.key);
    expect((await call('DELETE', `/v1/invites/${theirs.id}`, { key: tenant.key })).status).to.equal(404);
    const mine = await call('GET', '/v1/invites?limit=200', { key: tenant.key });
    expect(mine.body.invites.map((i: { id: string }) => i.id)).to.not.include(theirs.id);
    expect((await call('GET', '/v1/invites', { key: other.key })).body.invites.map((i: { id: string }) => i.id)).to.deep.equal([theirs.id]);
    expect((await call('DELETE', `/v1/invites/inv_nope`, { key: tenant.key })).status).to.equal(404);
  });

  it("hides other workspaces' invites and users from a query that forgets its tenant filter (row-level security)", async () => {
    const other = await newTenant('invites-rls');
    const outsider = await newOAuthUser([other.tenantId], 'outsider');
    const insider = await newOAuthUser([tenant.tenantId], 'insider');
    await invite({ email: uniqueEmail('hidden') }, other.key);
    const seen = await withTenant(testPlatform().db, tenant.tenantId, async (tx) => ({
      invites: await tx.selectFrom('invites').select('tenant_id').execute(),
      users: await tx.selectFrom('users').select(['id', 'email']).execute(),
    }));
    expect(seen.invites.length).to.be.above(0);
    expect(seen.invites.every((i) => i.tenant_id === tenant.tenantId)).to.equal(true);
    const userIds = seen.users.map((u) => u.id);
    expect(userIds).to.include(insider.userId);
    expect(userIds).to.not.include(outsider.userId);
    // Password hashes stay with the connecting role.
    let refused: Error | undefined;
    try {
      await withTenant(testPlatform().db, tenant.tenantId, (tx) => tx.selectFrom('users').select('password_hash').execute());
    } catch (err) {
      refused = err as Error;
    }
    expect(refused?.message).to.match(/permission denied/);
  });

  it('answers 405 with Allow to a method the invite page does not have', async () => {
    const response = await fetch(`${testPlatform().apiUrl}/invites/${'A'.repeat(43)}`, { method: 'PUT' });
    expect(response.status).to.equal(405);
    expect(response.headers.get('allow')!.split(/,\s*/)).to.include.members(['GET', 'POST']);
  });

  async function workspaceName(): Promise<string> {
    const row = await testPlatform().db.selectFrom('tenants').select('name').where('id', '=', tenant.tenantId).executeTakeFirstOrThrow();
    return row.name;
  }
});
