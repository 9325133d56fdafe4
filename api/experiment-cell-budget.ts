import { concurrencyInFlight } from '../db/experiments.js';
import type { TenantTx } from '../db/tenant-transaction.js';
import { ApiError } from './errors.js';

/**
 * The most cells a workspace's queued and running experiments may run at once: their `concurrency`
 * summed. Cells are runs on the workers every workspace shares, and the run rate limit does not count
 * them, so without a bound one workspace's experiments (each up to 32 cells at a time) could hold every
 * activity slot. Fairness (activities/tenant-fairness.ts) orders the waiting tasks; this bounds the
 * running ones.
 */
export const EXPERIMENT_CELLS_AT_ONCE_PER_TENANT = 64;

/** An experiment ends in minutes; a full workspace is told to come back in this many seconds. */
const RETRY_AFTER_SECONDS = 30;

/**
 * Answers 429 unless the workspace's other unfinished experiments leave room for `concurrency` more
 * cells at once. Call in the transaction that records the experiment or its new concurrency.
 */
export async function assertRoomForCells(tx: TenantTx, tenantId: string, concurrency: number, exceptId?: string): Promise<void> {
  const inFlight = await concurrencyInFlight(tx, tenantId, exceptId);
  if (inFlight + concurrency <= EXPERIMENT_CELLS_AT_ONCE_PER_TENANT) return;
  throw new ApiError(
    'rate_limited',
    `this workspace's queued and running experiments may run ${EXPERIMENT_CELLS_AT_ONCE_PER_TENANT} cells at once, their concurrency summed; ` +
      `the others take ${inFlight}, so this one may have at most ${Math.max(0, EXPERIMENT_CELLS_AT_ONCE_PER_TENANT - inFlight)}: ` +
      'lower its concurrency, or retry when an experiment has ended or been cancelled',
    {},
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
}
