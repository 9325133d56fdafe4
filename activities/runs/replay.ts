import { ApplicationFailure } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Context } from '@temporalio/activity';
import { ReplayError, Worker, type WorkflowBundle } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { Db } from '../../db/database.js';
import { findRunHistory } from '../../db/run-histories.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { REPLAY_RUN_FAILURES, type ReplayRunInput, type ReplayRunResult } from '../../workflows/replay-run-api.js';

const HEARTBEAT_EVERY_MS = 2000;

/**
 * Replays a run's history as stored in Postgres (by `storeRunHistory`) against `workflowBundle`, the
 * workflow code this worker runs. A replay error, a non-deterministic change above all, is the answer
 * (`deterministic: false`), not a failure of the activity.
 *
 * The SDK replays on this process's event loop (its replay worker runs workflow code in the main
 * thread), between the worker's other activities; the `replays` queue runs one at a time for that reason.
 */

export async function replayRunHistory(db: Db, workflowBundle: WorkflowBundle, ref: ReplayRunInput): Promise<ReplayRunResult> {
  const stored = await withTenant(db, ref.tenantId, (tx) => findRunHistory(tx, ref.tenantId, ref.runId));
  if (!stored) {
    throw ApplicationFailure.create({ type: REPLAY_RUN_FAILURES.HistoryMissing, message: `run ${ref.runId} has no stored history`, nonRetryable: true });
  }
  let error: string | null = null;
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    await Worker.runReplayHistory({ workflowBundle }, historyFromJSON(stored.history), ref.runId);
  } catch (err) {
    // Only what the code does with the history is the answer; a worker shutting down is retried.
    if (!(err instanceof DeterminismViolationError || err instanceof ReplayError)) throw err;
    error = `${err.name}: ${err.message}`;
  } finally {
    clearInterval(heartbeat);
  }
  return { deterministic: error === null, error, eventCount: stored.event_count };
}
