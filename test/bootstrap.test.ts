import { expect } from 'chai';
import { findActiveApiKey, generateApiKey } from '../db/api-keys.js';
import { ensureInitialWorkspace } from '../db/bootstrap.js';
import { call } from './support/api.js';
import { testPlatform } from './support/global.js';

describe('initial workspace', () => {
  it('is created once with a printed key, and not again on the next start', async () => {
    const { db } = testPlatform();
    const name = `first-start-${Date.now()}`;
    const first = await ensureInitialWorkspace(db, name);
    expect(first.newApiKey).to.match(/^svc_sk_/);
    expect((await findActiveApiKey(db, first.newApiKey!))?.kind).to.equal('management');
    const second = await ensureInitialWorkspace(db, name);
    expect(second).to.deep.equal({ tenantId: first.tenantId });
  });

  it('is seeded with INIT_API_KEY, which is then never printed', async () => {
    const { db } = testPlatform();
    const name = `seeded-${Date.now()}`;
    const key = generateApiKey();
    const seeded = await ensureInitialWorkspace(db, name, key);
    expect(seeded.newApiKey).to.equal(undefined);
    expect((await findActiveApiKey(db, key))?.tenant_id).to.equal(seeded.tenantId);
    expect(await ensureInitialWorkspace(db, name, key)).to.deep.equal({ tenantId: seeded.tenantId });

    // A new INIT_API_KEY on a later start joins the same workspace.
    const rotated = generateApiKey();
    expect(await ensureInitialWorkspace(db, name, rotated)).to.deep.equal({ tenantId: seeded.tenantId });
    expect((await findActiveApiKey(db, rotated))?.tenant_id).to.equal(seeded.tenantId);
  });

  it('starts when INIT_API_KEY was revoked: the key stays revoked and the start goes on', async () => {
    const { db } = testPlatform();
    const name = `revoked-${Date.now()}`;
    const key = generateApiKey();
    const seeded = await ensureInitialWorkspace(db, name, key);
    const spare = await call('POST', '/v1/api-keys', { key, body: { kind: 'management', name: 'spare' } });
    expect(spare.status).to.equal(201);
    const initKeyId = (await findActiveApiKey(db, key))!.id;
    expect((await call('DELETE', `/v1/api-keys/${initKeyId}`, { key: spare.body.key })).status).to.equal(200);

    expect(await ensureInitialWorkspace(db, name, key)).to.deep.equal({ tenantId: seeded.tenantId });
    expect(await findActiveApiKey(db, key)).to.equal(undefined);
    expect((await call('GET', '/v1/agents', { key })).status).to.equal(401);
  });

  it('refuses to revoke the last active management key of a workspace (409), even concurrently', async () => {
    const { db } = testPlatform();
    const key = generateApiKey();
    await ensureInitialWorkspace(db, `last-key-${Date.now()}`, key);
    const only = (await findActiveApiKey(db, key))!.id;
    const refused = await call('DELETE', `/v1/api-keys/${only}`, { key });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('conflict');
    expect(refused.body.error.message).to.match(/last active management key/);

    // Two management keys revoking each other at once: one wins, the other is refused.
    const second = (await call('POST', '/v1/api-keys', { key, body: { kind: 'management' } })).body;
    const [a, b] = await Promise.all([
      call('DELETE', `/v1/api-keys/${second.api_key.id}`, { key }),
      call('DELETE', `/v1/api-keys/${only}`, { key: second.key }),
    ]);
    // The loser is refused by the lock (409) or, when it came second, by its own key being gone (401).
    expect([a.status, b.status].filter((status) => status === 200)).to.have.length(1);
    expect([a.status, b.status].find((status) => status !== 200)).to.be.oneOf([409, 401]);
    const live = await db.selectFrom('api_keys').select('id').where('id', 'in', [only, second.api_key.id]).where('revoked_at', 'is', null).execute();
    expect(live).to.have.length(1);
    // Standard keys are never the last management key.
    const standard = (await call('POST', '/v1/api-keys', { key: a.status === 200 ? key : second.key, body: { kind: 'standard' } })).body.api_key.id;
    expect((await call('DELETE', `/v1/api-keys/${standard}`, { key: a.status === 200 ? key : second.key })).status).to.equal(200);
  });

  it('refuses an INIT_API_KEY that is not svc_sk_ and 32 random characters, with a clear message', async () => {
    const { db } = testPlatform();
    for (const weak of ['secret', 'svc_sk_short', `svc_sk_${'a'.repeat(40)}`, `svc_sk_${'0123'.repeat(10)}`, `sk_${generateApiKey()}`, `svc_sk_${'ab cd'.repeat(10)}`]) {
      let failure: Error | undefined;
      await ensureInitialWorkspace(db, `weak-${Date.now()}`, weak).catch((err: Error) => (failure = err));
      expect(failure?.message, weak).to.match(/^INIT_API_KEY must be svc_sk_ followed by at least 32 random/);
    }
    expect((await ensureInitialWorkspace(db, `hex-${Date.now()}`, `svc_sk_${'0123456789abcdef'.repeat(3)}`)).tenantId).to.match(/^ten_/);
  });
});
