import type { Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { appendRunEvents } from '../../db/run-events.js';
import { lockRun, recordRunEnd } from '../../db/runs.js';
import type { RunError } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { touchThread } from '../../db/threads.js';
import { emitRunEnded } from '../webhooks/platform-events.js';

/** How a run ends that no workflow ever began: refused or abandoned (failed), or cancelled by its caller. */
export type UnstartedRunEnd = { status: 'failed'; error: RunError } | { status: 'cancelled' };

/**
 * Ends a run that is still `queued` and that no workflow runs: its end recorded, a `run.failed` or
 * `run.cancelled` event, the thread touched, the webhook sent. False (nothing changed) when the run had
 * moved on. The run's row is locked as beginRun locks it, so of the two only the first changes it; a
 * workflow that begins the run afterwards finds it ended and stops.
 */
export async function endUnstartedRun(deps: { db: Db; temporal: Client }, run: { tenantId: string; runId: string }, end: UnstartedRunEnd): Promise<boolean> {
  const ended = await withTenant(deps.db, run.tenantId, async (tx) => {
    if ((await lockRun(tx, run.tenantId, run.runId))?.status !== 'queued') return false;
    // Nothing ran, so nothing was spent.
    const zero = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: '0' };
    const error = end.status === 'failed' ? end.error : null;
    const { threadId, endedAt, durationMs } = await recordRunEnd(tx, run.tenantId, run.runId, { status: end.status, output: null, error, usage: zero });
    await touchThread(tx, run.tenantId, threadId, { at: endedAt });
    const usage = { ...zero, duration_ms: durationMs };
    await appendRunEvents(tx, run.tenantId, run.runId, [{ type: `run.${end.status}`, dedupeKey: 'run.end', data: error ? { error, usage } : { usage } }]);
    return true;
  });
  // As finishRun's activity would: webhooks hear of the end (a Temporal that refused a start may refuse this too).
  if (ended) await emitRunEnded(deps, { tenantId: run.tenantId, runId: run.runId, status: end.status }).catch(() => {});
  return ended;
}
