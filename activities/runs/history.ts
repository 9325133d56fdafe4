import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { Db } from '../../db/database.js';
import { dequeueRunHistory, dequeueRunHistoryStatement, listQueuedHistories, recordHistoryCopyFailure, type QueuedHistory } from '../../db/run-history-queue.js';
import { saveRunHistoryStatement } from '../../db/run-histories.js';
import { tenantStatements } from '../../db/tenant-statement.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { RunRef } from './types.js';

/**
 * Mirroring finished runs' Temporal histories into Postgres, so they can be replayed against newer
 * workflow code (POST /v1/runs/{id}/replay) long after Temporal's retention has dropped them. A history
 * is copied only once the run's workflow has closed, so the stored history is the whole of it.
 *
 * A run's end queues it (`run_history_queue`, in the transaction of `finishRun`), and the one
 * `runHistoryArchiver` workflow runs `archiveQueuedHistories` over and over. Until this, every run
 * started a child workflow for its own history: a workflow start, two workflow tasks, an activity and
 * one more task in the run, about as much work for the Temporal server as the run's own steps, which on
 * a small server bounded how many runs a second it could take (docs/performance.md). The queue costs
 * the server a few reads per run (a describe or two, the history).
 */

const POLL_EVERY_MS = 200;
const HEARTBEAT_EVERY_MS = 1000;
/** How long one `archiveQueuedHistories` activity keeps at it before handing back to its workflow. */
const ACTIVITY_SPAN_MS = 60_000;
const QUEUE_PAGE = 50;
/** Runs of a page copied at once: each is two Temporal reads and a transaction, mostly waiting. */
const PARALLEL_COPIES = 4;
/** A run whose copy keeps failing is given up after this many attempts (~17 minutes of backing off). */
const MAX_COPY_ATTEMPTS = 12;

type Archived = 'archived' | 'running' | 'gone' | 'failed';

/** Copies the history of a run whose workflow has closed; a run still closing is left for the next pass. */
async function archiveIfClosed(db: Db, temporal: Client, ref: RunRef): Promise<Archived> {
  const handle = temporal.workflow.getHandle(ref.runId);
  try {
    if (!(await handle.describe()).closeTime) return 'running';
    await copyHistory(db, handle, ref);
    return 'archived';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // Temporal no longer has it (its retention passed while the archiver was down): nothing to copy.
    console.warn(`[archiver] the workflow of run ${ref.runId} is gone from Temporal; its history was not stored`);
    await withTenant(db, ref.tenantId, (tx) => dequeueRunHistory(tx, ref.tenantId, ref.runId));
    return 'gone';
  }
}

/**
 * One queued run. A copy that fails is noted on its row and tried again after a back-off, so one bad run
 * (a history Postgres will not take, say) holds up no other; after MAX_COPY_ATTEMPTS it is given up,
 * logged. Only a failure to note the failure (Postgres away) fails the activity.
 */
async function archiveQueued(db: Db, temporal: Client, queued: QueuedHistory): Promise<Archived> {
  const ref = { tenantId: queued.tenant_id, runId: queued.run_id };
  try {
    return await archiveIfClosed(db, temporal, ref);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (queued.attempts + 1 >= MAX_COPY_ATTEMPTS) {
      console.error(`[archiver] gave up on the history of run ${ref.runId} after ${MAX_COPY_ATTEMPTS} attempts: ${message}`);
      await withTenant(db, ref.tenantId, (tx) => dequeueRunHistory(tx, ref.tenantId, ref.runId));
    } else {
      const retryAfterMs = Math.min(1000 * 2 ** queued.attempts, 300_000);
      await withTenant(db, ref.tenantId, (tx) => recordHistoryCopyFailure(tx, ref.tenantId, ref.runId, message, retryAfterMs));
    }
    return 'failed';
  }
}

/**
 * Archives the queued runs whose workflows have closed, polling the queue, for about a minute; answers
 * how many it stored. Heartbeats every second (a dead worker's attempt moves to another worker) and
 * stops at the next page or poll when cancelled (a worker shutting down).
 */
export async function archiveQueuedHistories(db: Db, temporal: Client): Promise<number> {
  const context = Context.current();
  const until = Date.now() + ACTIVITY_SPAN_MS;
  // On a timer rather than per run: one slow copy must not look like a dead worker.
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await archiveUntil(db, temporal, context, until);
  } finally {
    clearInterval(heartbeat);
  }
}

async function archiveUntil(db: Db, temporal: Client, context: Context, until: number): Promise<number> {
  let stored = 0;
  while (Date.now() < until) {
    let storedThisPass = 0;
    // One pass over what is due, in run id order: runs still closing are skipped, not waited for.
    for (let after = ''; Date.now() < until; ) {
      context.cancellationSignal.throwIfAborted();
      const page = await listQueuedHistories(db, after, QUEUE_PAGE);
      for (let i = 0; i < page.length; i += PARALLEL_COPIES) {
        const results = await Promise.all(page.slice(i, i + PARALLEL_COPIES).map((queued) => archiveQueued(db, temporal, queued)));
        storedThisPass += results.filter((result) => result === 'archived').length;
      }
      if (page.length < QUEUE_PAGE) break;
      after = page.at(-1)!.run_id;
    }
    stored += storedThisPass;
    if (storedThisPass === 0) await context.sleep(POLL_EVERY_MS);
  }
  return stored;
}

/**
 * The archiving of runs started before the queue: their histories start an `archiveRunHistory` child
 * per run, which waits here for the run to close and copies its history.
 */
export async function storeRunHistory(db: Db, temporal: Client, ref: RunRef): Promise<number> {
  const context = Context.current();
  const handle = temporal.workflow.getHandle(ref.runId);
  while (!(await handle.describe()).closeTime) {
    context.heartbeat();
    await context.sleep(POLL_EVERY_MS);
  }
  return copyHistory(db, handle, ref);
}

/** Saves the closed workflow's history and takes the run off the queue, in one transaction (one round trip); answers its event count. */
async function copyHistory(db: Db, handle: WorkflowHandle, ref: RunRef): Promise<number> {
  const history = await handle.fetchHistory();
  const eventCount = history.events?.length ?? 0;
  const json = historyToJSON(history);
  await tenantStatements(db, ref.tenantId, (scope) => [
    saveRunHistoryStatement(scope, ref.tenantId, ref.runId, json, eventCount),
    dequeueRunHistoryStatement(scope, ref.tenantId, ref.runId),
  ]);
  return eventCount;
}
