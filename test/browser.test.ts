import { expect } from 'chai';
import { openSecret } from '../activities/secrets/secret-box.js';
import { SECRETS_KEY_VARIABLE } from '../activities/secrets/secrets-key.js';
import { signInSecretContext } from '../db/browser-sign-ins.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';

const ORIGIN = 'https://app.example.com';
const SECRET = 'session-value-that-must-never-show';

function cookie(extra: Record<string, unknown> = {}) {
  return { name: 'sid', value: SECRET, domain: 'app.example.com', path: '/', expires: 1893456000, httpOnly: true, secure: true, sameSite: 'Lax', ...extra };
}

function storageState(cookies = [cookie()], localStorage = [{ name: 'token', value: `ls-${SECRET}` }]) {
  return { cookies, origins: [{ origin: ORIGIN, localStorage }] };
}

async function storedRow(id: string) {
  return testPlatform().db.selectFrom('browser_sign_ins').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('browser: saved sign-ins', () => {
  let tenant: TestTenant;
  before(async () => {
    tenant = await newTenant('browser');
  });

  it('saves a sign-in sealed for its row, answers counts instead of the storage state, and returns an existing name unchanged', async () => {
    const state = storageState([cookie(), cookie({ name: 'pref', domain: '.example.com', expires: -1 })]);
    const created = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'crm', origin: `${ORIGIN}/`, storage_state: state } });
    expect(created.status).to.equal(201);
    expect(created.body.created).to.equal(true);
    const signIn = created.body.sign_in;
    expect(signIn).to.include({ name: 'crm', origin: ORIGIN, cookie_count: 2, local_storage_count: 1, cookies_expire_at: '2030-01-01T00:00:00.000Z' });
    expect(signIn.cookie_domains).to.deep.equal(['.example.com', 'app.example.com']);
    expect(signIn.id).to.match(/^bsi_/);
    expect(JSON.stringify(created.body)).to.not.include(SECRET);

    const row = await storedRow(signIn.id);
    expect(row.storage_state).to.not.include(SECRET);
    expect(JSON.parse(await openSecret(row.storage_state, signInSecretContext(tenant.tenantId, signIn.id)))).to.deep.equal(state);
    // Sealed for this row: the same ciphertext read as another row's is unreadable.
    await openSecret(row.storage_state, signInSecretContext(tenant.tenantId, 'bsi_other')).then(
      () => expect.fail('opened for another row'),
      (err: Error) => expect(err.name).to.equal('SecretUnreadableError'),
    );

    const again = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'crm', origin: 'https://other.example.org', storage_state: { cookies: [], origins: [] } } });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ sign_in: signIn, created: false });

    for (const path of [`/v1/browser/sign-ins/${signIn.id}`, '/v1/browser/sign-ins/crm']) {
      const got = await call('GET', path, { key: tenant.standardKey });
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal({ sign_in: signIn });
    }
    const listed = await call('GET', '/v1/browser/sign-ins', { key: tenant.standardKey });
    expect(listed.body.sign_ins.map((s: { name: string }) => s.name)).to.include('crm');
    expect(JSON.stringify(listed.body)).to.not.include(SECRET);
  });

  it('refuses cookies for other sites, local storage of other origins, bad origins and shapes, naming each field, and stores nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([cookie({ domain: 'evil.example.org' })]) }, 'body.storage_state.cookies[0].domain'],
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([cookie({ domain: '.com' })]) }, 'body.storage_state.cookies[0].domain'],
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([cookie({ domain: 'other.app.example.com' })]) }, 'body.storage_state.cookies[0].domain'],
      // Public suffixes: every site under them would share the cookie.
      [{ name: 'a', origin: 'https://shop.example.co.uk', storage_state: { cookies: [cookie({ domain: '.co.uk' })], origins: [] } }, 'body.storage_state.cookies[0].domain'],
      [{ name: 'a', origin: 'https://ada.github.io', storage_state: { cookies: [cookie({ domain: '.github.io' })], origins: [] } }, 'body.storage_state.cookies[0].domain'],
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([cookie({ expires: 0 })]) }, 'body.storage_state.cookies.0.expires'],
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([cookie({ expires: -0.5 })]) }, 'body.storage_state.cookies.0.expires'],
      [{ name: 'a', origin: ORIGIN, storage_state: { cookies: [], origins: [{ origin: 'https://evil.example.org', localStorage: [] }] } }, 'body.storage_state.origins[0].origin'],
      [{ name: 'a', origin: 'https://app.example.com/path', storage_state: storageState() }, 'body.origin'],
      [{ name: 'a', origin: 'ftp://app.example.com', storage_state: storageState() }, 'body.origin'],
      [{ name: 'a', origin: 'https://app.example.com:0', storage_state: storageState() }, 'body.origin'],
      [{ name: 'a', origin: ORIGIN, storage_state: { cookies: [{ ...cookie(), extra: 1 }], origins: [] } }, 'body.storage_state.cookies.0'],
      [{ name: 'a', origin: ORIGIN, storage_state: { cookies: [cookie({ sameSite: 'Sometimes' })], origins: [] } }, 'body.storage_state.cookies.0.sameSite'],
      [{ name: 'a', origin: ORIGIN, storage_state: { cookies: [] } }, 'body.storage_state'],
      [{ name: 'a', origin: ORIGIN, storage_state: storageState([], [{ name: 'big', value: 'x'.repeat(520 * 1024) }]) }, 'body.storage_state'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body });
      expect(response.status, field).to.equal(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field).join(' '), JSON.stringify(response.body.error)).to.include(field);
    }
    expect((await call('GET', '/v1/browser/sign-ins/a', { key: tenant.key })).status).to.equal(404);
  });

  it('stores a cookie\'s partitionKey nowhere, and accepts a parent domain that is no public suffix', async () => {
    const state = { cookies: [cookie({ partitionKey: 'https://example.com' }), cookie({ name: 'uk', domain: '.example.co.uk' })], origins: [] };
    const created = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'partitioned', origin: 'https://shop.example.co.uk', storage_state: { cookies: [state.cookies[1]], origins: [] } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const withKey = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'partitioned-2', origin: ORIGIN, storage_state: { cookies: [state.cookies[0]], origins: [] } } });
    expect(withKey.status).to.equal(201);
    const row = await storedRow(withKey.body.sign_in.id);
    const opened = JSON.parse(await openSecret(row.storage_state, signInSecretContext(tenant.tenantId, row.id)));
    expect(opened.cookies).to.deep.equal([cookie()]);
  });

  it('changes a sign-in with PATCH: rename, new storage state, a new origin only with a new storage state; 409 and 404', async () => {
    const signIn = (await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'wiki', origin: ORIGIN, storage_state: storageState() } })).body.sign_in;
    const renamed = await call('PATCH', '/v1/browser/sign-ins/wiki', { key: tenant.key, body: { name: 'wiki2' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.sign_in).to.include({ id: signIn.id, name: 'wiki2', cookie_count: 1 });
    const sealedBefore = (await storedRow(signIn.id)).storage_state;

    const moved = await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key, body: { origin: 'https://docs.example.net' } });
    expect(moved.status).to.equal(400);
    expect(moved.body.error.fields[0].field).to.equal('body.storage_state');
    expect((await storedRow(signIn.id)).storage_state).to.equal(sealedBefore);

    const fresh = { cookies: [cookie({ domain: 'docs.example.net', name: 'a' }), cookie({ domain: 'docs.example.net', name: 'b', expires: -1 })], origins: [] };
    const replaced = await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key, body: { origin: 'https://docs.example.net', storage_state: fresh } });
    expect(replaced.status).to.equal(200);
    expect(replaced.body.sign_in).to.include({ origin: 'https://docs.example.net', cookie_count: 2, local_storage_count: 0 });
    expect(JSON.parse(await openSecret((await storedRow(signIn.id)).storage_state, signInSecretContext(tenant.tenantId, signIn.id)))).to.deep.equal(fresh);

    // The stored origin still holds a new storage state to its cookies' domains.
    const wrongSite = await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key, body: { storage_state: storageState() } });
    expect(wrongSite.status).to.equal(400);

    await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'taken', origin: ORIGIN, storage_state: storageState() } });
    expect((await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key, body: { name: 'taken' } })).status).to.equal(409);
    expect((await call('PATCH', '/v1/browser/sign-ins/bsi_missing', { key: tenant.key, body: { name: 'x' } })).status).to.equal(404);
    expect((await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key, body: {} })).status).to.equal(400);
  });

  it('needs a management key to write, answers 404 across workspaces, and deletes', async () => {
    const body = { name: 'mgmt', origin: ORIGIN, storage_state: storageState() };
    expect((await call('POST', '/v1/browser/sign-ins', { key: tenant.standardKey, body })).status).to.equal(403);
    const signIn = (await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body })).body.sign_in;
    expect((await call('PATCH', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.standardKey, body: { name: 'y' } })).status).to.equal(403);
    expect((await call('DELETE', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.standardKey })).status).to.equal(403);

    const other = await newTenant('browser-other');
    for (const ref of [signIn.id, 'mgmt']) {
      expect((await call('GET', `/v1/browser/sign-ins/${ref}`, { key: other.key })).status).to.equal(404);
      expect((await call('PATCH', `/v1/browser/sign-ins/${ref}`, { key: other.key, body: { name: 'stolen' } })).status).to.equal(404);
      expect((await call('DELETE', `/v1/browser/sign-ins/${ref}`, { key: other.key })).status).to.equal(404);
    }
    expect((await call('GET', '/v1/browser/sign-ins', { key: other.key })).body.sign_ins).to.deep.equal([]);
    // A tool of another workspace cannot name it either.
    const tool = await call('POST', '/v1/tools', { key: other.key, body: { name: 'b', kind: 'browser', browser: { sign_in: signIn.id } } });
    expect(tool.status).to.equal(400);
    expect(tool.body.error.fields[0].field).to.equal('body.browser.sign_in');

    const deleted = await call('DELETE', '/v1/browser/sign-ins/mgmt', { key: tenant.key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: signIn.id });
    expect((await call('GET', `/v1/browser/sign-ins/${signIn.id}`, { key: tenant.key })).status).to.equal(404);
  });

  it('without SECRETS_KEY refuses to store a sign-in (503) but still answers an existing name', async () => {
    const saved = process.env[SECRETS_KEY_VARIABLE];
    delete process.env[SECRETS_KEY_VARIABLE];
    try {
      const refused = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'nokey', origin: ORIGIN, storage_state: storageState() } });
      expect(refused.status).to.equal(503);
      expect(refused.body.error.message).to.include('SECRETS_KEY');
      expect((await call('GET', '/v1/browser/sign-ins/nokey', { key: tenant.key })).status).to.equal(404);
      const existing = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'crm', origin: ORIGIN, storage_state: storageState() } });
      expect(existing.status).to.equal(200);
    } finally {
      if (saved !== undefined) process.env[SECRETS_KEY_VARIABLE] = saved;
    }
  });

  it('lets a browser tool name a sign-in by name, keeps its id, and shows the tool\'s settings', async () => {
    const signIn = (await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'tool-site', origin: ORIGIN, storage_state: storageState() } })).body.sign_in;
    const tool = await call('POST', '/v1/tools', { key: tenant.key, body: { name: 'browse', kind: 'browser', browser: { sign_in: 'tool-site', max_chars: 500 } } });
    expect(tool.status).to.equal(201);
    expect(tool.body.tool).to.include({ kind: 'browser', http: null, mcp: null, agent: null, builtin: null });
    expect(tool.body.tool.browser).to.deep.equal({ sign_in: signIn.id, max_chars: 500 });
    const plain = await call('POST', '/v1/tools', { key: tenant.key, body: { name: 'browse_plain', kind: 'browser', browser: {} } });
    expect(plain.body.tool.browser).to.deep.equal({});
    for (const body of [
      { name: 'x1', kind: 'browser' },
      { name: 'x2', kind: 'browser', browser: { sign_in: 'nope' } },
      { name: 'x3', kind: 'browser', browser: { timeout_ms: 10 } },
      { name: 'x4', kind: 'browser', browser: {}, http: { method: 'GET', url: 'https://a.example' } },
      { name: 'x5', kind: 'http', http: { method: 'GET', url: 'https://a.example' }, browser: {} },
    ]) {
      expect((await call('POST', '/v1/tools', { key: tenant.key, body })).status, JSON.stringify(body)).to.equal(400);
    }
  });
});
