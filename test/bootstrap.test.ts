import { expect } from 'chai';
import { findActiveApiKey, generateApiKey } from '../db/api-keys.js';
import { ensureInitialWorkspace } from '../db/bootstrap.js';
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
});
