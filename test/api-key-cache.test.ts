import { expect } from 'chai';
import { API_KEY_CACHE_TTL_MS, apiKeyCacheOf } from '../db/api-key-cache.js';
import { loadTemporalDevConfig } from '../workers/temporal-dev-server.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { startApiProcess, type ApiProcess } from './support/platform-processes.js';

/**
 * The API's cache of key lookups (db/api-key-cache.ts): a key that stops being valid is refused at once
 * on the process that revoked it and, through the api_keys trigger's NOTIFY, within moments on every
 * other — far sooner than the cache's TTL, which the bounded waits below stay well under.
 */
describe('API key cache', function () {
  this.timeout(60_000);
  /** How long another process may take to hear a revocation; a fraction of the TTL, so only the NOTIFY can pass it. */
  const NOTIFY_BOUND_MS = 2_000;
  let tenant: TestTenant;

  before(async () => {
    expect(NOTIFY_BOUND_MS * 3).to.be.below(API_KEY_CACHE_TTL_MS);
    tenant = await newTenant('key-cache');
  });

  it('is in use for the API on this database', () => {
    expect(apiKeyCacheOf(testPlatform().db)).to.not.equal(undefined);
  });

  it('refuses a cached key on the very next request after its revocation answered', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard' } });
      const key: string = created.body.key;
      // Cached by the first request, served from the cache by the second.
      expect((await call('GET', '/v1/agents', { key })).status).to.equal(200);
      expect((await call('GET', '/v1/agents', { key })).status).to.equal(200);
      const revoked = await call('DELETE', `/v1/api-keys/${created.body.api_key.id}`, { key: tenant.key });
      expect(revoked.status).to.equal(200);
      expect((await call('GET', '/v1/agents', { key })).status).to.equal(401);
    }
  });

  it('refuses requests racing a revocation from the moment it answered', async () => {
    const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard' } });
    const key: string = created.body.key;
    let answered = false;
    let sentAfter = 0;
    const acceptedAfter: number[] = [];
    // Lookups in flight throughout the revocation: none may leave the live key cached behind it.
    const load = (async () => {
      for (let i = 0; i < 200; i++) {
        const wasAnswered = answered;
        const { status } = await call('GET', '/v1/agents', { key });
        if (wasAnswered) sentAfter++;
        if (wasAnswered && status === 200) acceptedAfter.push(i);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await call('DELETE', `/v1/api-keys/${created.body.api_key.id}`, { key: tenant.key })).status).to.equal(200);
    answered = true;
    await load;
    expect(sentAfter).to.be.above(0);
    expect(acceptedAfter).to.deep.equal([]);
  });

  it("never serves one workspace's key as another's", async () => {
    const other = await newTenant('key-cache-other');
    const mine = await call('POST', '/v1/agents', { key: tenant.standardKey, body: { name: 'cache-mine' } });
    const theirs = await call('POST', '/v1/agents', { key: other.standardKey, body: { name: 'cache-theirs' } });
    for (let i = 0; i < 5; i++) {
      const [a, b] = await Promise.all([call('GET', '/v1/agents', { key: tenant.standardKey }), call('GET', '/v1/agents', { key: other.standardKey })]);
      const aIds = a.body.agents.map((x: { id: string }) => x.id);
      const bIds = b.body.agents.map((x: { id: string }) => x.id);
      expect(aIds).to.include(mine.body.agent.id).and.not.include(theirs.body.agent.id);
      expect(bIds).to.include(theirs.body.agent.id).and.not.include(mine.body.agent.id);
    }
  });

  it("refuses a workspace's keys once the workspace is deleted, within the NOTIFY bound", async () => {
    const doomed = await newTenant('key-cache-doomed');
    expect((await call('GET', '/v1/agents', { key: doomed.standardKey })).status).to.equal(200);
    // No API deletes a workspace; an operator does, and on delete cascade takes its keys.
    await testPlatform().db.deleteFrom('tenants').where('id', '=', doomed.tenantId).execute();
    expect(await msUntilRefused(testPlatform().apiUrl, doomed.standardKey)).to.be.below(NOTIFY_BOUND_MS);
  });

  describe('on a second API process (Postgres)', () => {
    let second: ApiProcess | undefined;

    before(async function () {
      this.timeout(120_000);
      if (testPlatform().databaseKind !== 'postgres') {
        console.log('      (skipped: needs DATABASE_URL; separate processes cannot share embedded PGlite)');
        return this.skip();
      }
      second = await startApiProcess('api-second', {
        databaseUrl: process.env.DATABASE_URL!,
        temporalAddress: testPlatform().temporalAddress,
        temporalNamespace: loadTemporalDevConfig().namespace,
        extra: { INIT_WORKSPACE: 'test-bootstrap', TEMPORAL_LOG_LEVEL: 'ERROR' },
      });
    });

    after(async () => {
      await second?.stop();
    });

    for (const [revoker, checker] of [
      ['this process', 'the second'],
      ['the second process', 'this one'],
    ] as const) {
      it(`refuses a key revoked through ${revoker} on ${checker} within the NOTIFY bound`, async () => {
        const urls = { here: testPlatform().apiUrl, there: second!.url };
        const [revokeAt, checkAt] = revoker === 'this process' ? [urls.here, urls.there] : [urls.there, urls.here];
        const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard' } });
        const key: string = created.body.key;
        // Cached on the checking process first.
        expect((await get(checkAt, key)).status).to.equal(200);
        expect((await get(checkAt, key)).status).to.equal(200);
        const revoked = await fetch(`${revokeAt}/v1/api-keys/${created.body.api_key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tenant.key}` } });
        expect(revoked.status).to.equal(200);
        expect((await get(revokeAt, key)).status).to.equal(401);
        expect(await msUntilRefused(checkAt, key)).to.be.below(NOTIFY_BOUND_MS);
      });
    }
  });
});

async function get(apiUrl: string, key: string): Promise<Response> {
  const response = await fetch(`${apiUrl}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response;
}

/** Polls until `key` is refused there; how long that took (the TTL and more when it never is). */
async function msUntilRefused(apiUrl: string, key: string): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < API_KEY_CACHE_TTL_MS * 2) {
    const { status } = await get(apiUrl, key);
    if (status === 401) return Date.now() - started;
    expect(status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}
