import { ApplicationFailure } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../db/database.js';
import { findRunHistory } from '../../db/run-histories.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { REPLAY_RUN_FAILURES, type ReplayRunInput, type ReplayRunResult } from '../../workflows/replay-run-api.js';

/**
 * Replays a run's history as stored in Postgres (by `storeRunHistory`) against `workflowBundle`, the
 * workflow code this worker runs. Any replay error, a non-deterministic change above all, is the answer
 * (`deterministic: false`), not a failure of the activity.
 */
export async function replayRunHistory(db: Db, workflowBundle: WorkflowBundle, ref: ReplayRunInput): Promise<ReplayRunResult> {
  const stored = await withTenant(db, ref.tenantId, (tx) => findRunHistory(tx, ref.tenantId, ref.runId));
  if (!stored) {
    throw ApplicationFailure.create({ type: REPLAY_RUN_FAILURES.HistoryMissing, message: `run ${ref.runId} has no stored history`, nonRetryable: true });
  }
  let error: string | null = null;
  try {
    await Worker.runReplayHistory({ workflowBundle }, historyFromJSON(stored.history), ref.runId);
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  return { deterministic: error === null, error, eventCount: stored.event_count };
}
