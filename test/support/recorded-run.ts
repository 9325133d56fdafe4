import type { Db } from '../../db/database.js';
import { createQueuedRun, type NewRun } from '../../db/runs.js';
import { withTenant } from '../../db/tenant-transaction.js';

/** A run recorded as POST /v1/agents/{id}/runs records it (queued, with `run.created`), without its workflow: its id. */
export async function recordQueuedRun(db: Db, run: NewRun): Promise<string> {
  const queued = await withTenant(db, run.tenantId, (tx) => createQueuedRun(tx, run));
  if (!queued.queued) throw new Error(queued.reason);
  return queued.runId;
}
