import { isGrpcServiceError, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { workflowState } from '../../activities/workflow-state.js';
import { STRANDED_WORK_KINDS } from './kinds.js';

/**
 * Work the platform hands to Temporal is recorded in Postgres first, then its workflow is started: a run
 * (`queued`), a document's processing (`accepted`), an experiment (`queued`). A process that stops between
 * the two — killed, its machine gone — leaves a record that says it waits, with nothing to move it; so
 * does a document upload while Temporal refuses starts (the upload is accepted all the same). The records'
 * own statuses are the outbox: every worker process sweeps them about once a minute.
 *
 * - Waiting longer than STRANDED_AFTER_MS: the workflow is started. A start refused as already started
 *   means Temporal holds a workflow for the record (one waiting for a free worker, say): left alone, so
 *   nothing runs twice however many processes sweep. The API starts a workflow within milliseconds of its
 *   commit, so younger records are almost all in flight (and a start racing the API's is harmless).
 * - Waiting longer than TOO_LATE_MS: not started any more. Work that late surprises more than it serves
 *   (a run answered an hour after its caller gave up), and Temporal does not keep closed workflows for
 *   ever, after which a start would no longer be refused.
 * - Waiting longer than GIVE_UP_AFTER_MS: ended failed, unless Temporal has its workflow open. The ten
 *   minutes between the two keep a start by one process and a give-up by another from meeting; each
 *   give-up changes only a record still waiting, and a workflow that begins a given-up record stops.
 *
 * Each kind is read from where the last sweep of this process stopped (ids sort by creation), a page at a
 * time, so records whose workflow exists cannot hide the ones behind them.
 */

/** How long a record waits for its workflow before the sweep starts it. */
export const STRANDED_AFTER_MS = 60_000;

/** How long a record may wait and still be started. */
export const TOO_LATE_MS = 50 * 60_000;

/** How long a record may wait before the sweep ends it. */
export const GIVE_UP_AFTER_MS = 60 * 60_000;

/** Records of each kind looked at per sweep; the next sweep goes on from there. */
const PAGE = 100;

export interface SweepOutcome {
  started: string[];
  ended: string[];
}

/** Where each kind's next page starts, per process; '' = from the first. */
export type SweepCursors = Map<string, string>;

/**
 * Sweeps one page of each kind; answers the ids started and ended, by kind. A Temporal that cannot be
 * reached ends the sweep (the next one tries again); any other failure is logged and the sweep goes on.
 */
export async function sweepStrandedWork(db: Db, temporal: Client, cursors: SweepCursors = new Map()): Promise<Record<string, SweepOutcome>> {
  const outcomes: Record<string, SweepOutcome> = {};
  for (const kind of STRANDED_WORK_KINDS) {
    const outcome: SweepOutcome = (outcomes[kind.name] = { started: [], ended: [] });
    const from = cursors.get(kind.name) ?? '';
    const records = await kind.list(db, { waitedMs: STRANDED_AFTER_MS, tooLateMs: TOO_LATE_MS, overdueMs: GIVE_UP_AFTER_MS, afterId: from, limit: PAGE });
    // After a short page, from the first again.
    cursors.set(kind.name, records.length < PAGE ? '' : records[records.length - 1]!.id);
    for (const [index, record] of records.entries()) {
      try {
        if (!record.tooLate) {
          await record.start(temporal);
          outcome.started.push(record.id);
        } else if (record.overdue) {
          const state = await workflowState(temporal, record.workflowId);
          const waited = `waited over ${GIVE_UP_AFTER_MS / 60_000} minutes`;
          const reason = state === 'none' ? `its workflow was never started (${waited})` : `its workflow ended without running it (${waited})`;
          if (state !== 'open' && (await record.giveUp({ db, temporal }, reason))) outcome.ended.push(record.id);
        }
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) continue;
        if (isUnreachable(err)) {
          // The next sweep goes on from this record.
          cursors.set(kind.name, index === 0 ? from : records[index - 1]!.id);
          throw err;
        }
        console.error(`[worker] stranded-work sweep: ${kind.name} ${record.id}:`, err instanceof Error ? err.message : err);
      }
    }
    if (outcome.started.length > 0) console.log(`[worker] started the workflows of ${outcome.started.length} stranded ${kind.name}: ${outcome.started.join(', ')}`);
    if (outcome.ended.length > 0) console.log(`[worker] ended ${outcome.ended.length} ${kind.name} whose workflow never ran them: ${outcome.ended.join(', ')}`);
  }
  return outcomes;
}

/** gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4), on the error or its cause: Temporal is not answering. */
function isUnreachable(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (isGrpcServiceError(e) && (e.code === 14 || e.code === 4)) return true;
  }
  return false;
}

/** Sweeps now and every `intervalMs` (one sweep at a time) until the returned function is called; it resolves once a sweep in progress is done. */
export function sweepStrandedWorkEvery(db: Db, temporal: Client, intervalMs: number): () => Promise<void> {
  const cursors: SweepCursors = new Map();
  let current: Promise<void> | undefined;
  const sweep = () => {
    current ??= sweepStrandedWork(db, temporal, cursors)
      .then(
        () => {},
        (err: unknown) => console.error('[worker] the stranded-work sweep stopped early:', err instanceof Error ? err.message : err),
      )
      .finally(() => (current = undefined));
  };
  sweep();
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
