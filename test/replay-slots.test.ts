import { expect } from 'chai';
import { ApiError } from '../api/errors.js';
import { releaseReplaySlot, REPLAY_SLOTS_PER_TENANT, takeReplaySlot } from '../api/replay-slots.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { failure } from './support/failure.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/** How long the API waits for a replay (api/routes/runs.ts): a lease older than this is over. */
const LEASE_SECONDS = 300;

describe('replay slots: a workspace’s replays in flight are bounded', () => {
  const take = (tenantId: string, leaseId: string) => withTenant(testPlatform().db, tenantId, (tx) => takeReplaySlot(tx, tenantId, leaseId, LEASE_SECONDS));
  const release = (tenantId: string, leaseId: string) => withTenant(testPlatform().db, tenantId, (tx) => releaseReplaySlot(tx, tenantId, leaseId));

  it(`lets a workspace hold ${REPLAY_SLOTS_PER_TENANT} slots; one more is a 429 until a slot is released, and other workspaces are unaffected`, async () => {
    const [mine, other] = await Promise.all([newTenant('replay-slots'), newTenant('replay-slots-other')]);
    const leases = Array.from({ length: REPLAY_SLOTS_PER_TENANT }, (_, i) => `replay-test-${i}`);
    // Taken all at once, as concurrent requests (or API processes) would: exactly the limit gets through.
    const attempts = await Promise.allSettled([...leases, 'replay-test-extra'].map((lease) => take(mine.tenantId, lease)));
    const refused = attempts.filter((attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected');
    expect(refused).to.have.length(1);
    const error = refused[0]!.reason as ApiError;
    expect(error).to.be.instanceOf(ApiError);
    expect(error.status).to.equal(429);
    expect(error.headers['Retry-After']).to.equal('5');

    await take(other.tenantId, 'replay-test-other');
    const taken = leases.filter((_, i) => attempts[i]!.status === 'fulfilled');
    const extraWasTaken = attempts.at(-1)!.status === 'fulfilled';
    await release(mine.tenantId, extraWasTaken ? 'replay-test-extra' : taken[0]!);
    await take(mine.tenantId, 'replay-test-after-release');
  });

  it('does not count a lease older than the longest replay (its API process died holding it)', async () => {
    const { tenantId } = await newTenant('replay-slots-stale');
    const longAgo = new Date(Date.now() - (LEASE_SECONDS + 60) * 1000);
    await testPlatform()
      .db.insertInto('rate_limit_hits')
      .values(Array.from({ length: REPLAY_SLOTS_PER_TENANT }, (_, i) => ({ tenant_id: tenantId, key_id: `replay-stale-${i}`, bucket: 'replay-slots', at: longAgo })))
      .execute();
    await take(tenantId, 'replay-fresh');
  });

  describe('over HTTP', () => {
    let tenantId: string;
    let key: string;
    let runId: string;
    before(async () => {
      ({ tenantId, key } = await newTenant('replay-slots-http'));
      const agentId = await publishAgent(key, 'replayed', scriptedGraph([{ text: 'done' }]));
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' } });
      runId = response.frames[0]!.data.run_id;
      // The history is stored just after the run closes.
      for (let attempt = 0; attempt < 100; attempt++) {
        const stored = await testPlatform().db.selectFrom('run_histories').select('run_id').where('run_id', '=', runId).executeTakeFirst();
        if (stored) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });

    it('answers 429 with Retry-After while the workspace’s slots are taken, and replays once one is free', async () => {
      const held = Array.from({ length: REPLAY_SLOTS_PER_TENANT }, (_, i) => `replay-held-${i}`);
      for (const lease of held) await take(tenantId, lease);

      const refused = await call('POST', `/v1/runs/${runId}/replay`, { key });
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('5');
      expect(refused.body.error).to.deep.equal({
        code: 'rate_limited',
        message: `this workspace already has ${REPLAY_SLOTS_PER_TENANT} replays queued or running; retry when one has finished`,
      });

      await release(tenantId, held[0]!);
      const replayed = await call('POST', `/v1/runs/${runId}/replay`, { key });
      expect(replayed.status).to.equal(200);
      expect(replayed.body).to.include({ run_id: runId, deterministic: true });
      // The replay gave its slot back: the one left free is free again.
      await take(tenantId, 'replay-after');
      expect(await failure(take(tenantId, 'replay-one-too-many'))).to.be.instanceOf(ApiError);
    });
  });
});
