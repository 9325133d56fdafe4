import type { Db } from '../../db/database.js';
import { createQueuedRun, markRunRunning, type NewRun } from '../../db/runs.js';
import { withTenant } from '../../db/tenant-transaction.js';

/** A run recorded as POST /v1/agents/{id}/runs records it (queued, with `run.created`), without its workflow: its id. */
export async function recordQueuedRun(db: Db, run: NewRun): Promise<string> {
  const queued = await withTenant(db, run.tenantId, (tx) => createQueuedRun(tx, run));
  if (!queued.queued) throw new Error(queued.reason);
  return queued.runId;
}

/**
 * The same, marked running in the same transaction: a live run whose log holds `run.created` (seq 1),
 * which no workflow writes to and the stranded-work sweep (workers/stranded-work/) leaves alone.
 */
export async function recordRunningRun(db: Db, run: NewRun): Promise<string> {
  const queued = await withTenant(db, run.tenantId, async (tx) => {
    const recorded = await createQueuedRun(tx, run);
    if (recorded.queued) await markRunRunning(tx, run.tenantId, recorded.runId, { prompts: [], model: 'scripted/recorded' });
    return recorded;
  });
  if (!queued.queued) throw new Error(queued.reason);
  return queued.runId;
}
