import { releaseLease, takeLease } from '../db/rate-limit-hits.js';
import type { TenantTx } from '../db/tenant-transaction.js';
import { ApiError } from './errors.js';

/**
 * Replays a workspace may have queued or running at once, across every API process. Each worker replays
 * one at a time (workers/workers.ts), so without this one tenant's burst would fill the `replays` queue
 * and every other tenant's replay would wait behind it until its request timed out.
 */
export const REPLAY_SLOTS_PER_TENANT = 2;

/** The leases' bucket in `rate_limit_hits`: one lease per replay in flight, its workflow id as key. */
const BUCKET = 'replay-slots';

/** A full workspace is told to come back in this many seconds (a replay takes seconds). */
const RETRY_AFTER_SECONDS = 5;

/**
 * Takes a slot for the replay `leaseId` or answers 429. A lease older than `leaseSeconds` (how long the
 * API waits for a replay) is over whatever became of its request, so an API process that died holding
 * one does not keep the slot.
 */
export async function takeReplaySlot(tx: TenantTx, tenantId: string, leaseId: string, leaseSeconds: number): Promise<void> {
  if (!(await takeLease(tx, tenantId, BUCKET, leaseId, REPLAY_SLOTS_PER_TENANT, leaseSeconds))) {
    throw new ApiError(
      'rate_limited',
      `this workspace already has ${REPLAY_SLOTS_PER_TENANT} replays queued or running; retry when one has finished`,
      {},
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }
}

export async function releaseReplaySlot(tx: TenantTx, tenantId: string, leaseId: string): Promise<void> {
  await releaseLease(tx, tenantId, BUCKET, leaseId);
}
