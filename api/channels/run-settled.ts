import { findRun, findRunStatus, isTerminal } from '../../db/runs.js';
import type { Run, RunStatus } from '../../db/schema.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import type { AppDeps } from '../deps.js';

/** How often the run's status is read without a notification: the poll only covers a missed one. */
const POLL_EVERY_MS = 1_500;
/** The least time between two reads: a run's events come in bursts, and one read answers a burst. */
const MIN_READ_GAP_MS = 100;

/**
 * The run once it has ended or paused on a question, or as it is when `timeoutMs` have passed or
 * `signal` aborts (the caller hung up); undefined when the run is gone (deleted with its agent).
 * The run's own notifications (api/event-hub.ts) wake the wait; meanwhile only its status is read.
 */
export async function runWhenSettled(deps: AppDeps, tenantId: string, runId: string, timeoutMs: number, signal?: AbortSignal): Promise<Run | undefined> {
  const deadline = Date.now() + timeoutMs;
  let notified = false;
  let wake: (() => void) | undefined;
  const unsubscribe = deps.events.subscribe(runId, () => {
    notified = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      notified = false;
      const lastRead = Date.now();
      const status = await readAsTenant(deps.db, tenantId, (reader) => findRunStatus(reader, tenantId, runId));
      if (status === undefined) return undefined;
      if (settled(status) || Date.now() >= deadline || signal?.aborted) break;
      await new Promise<void>((resolve) => {
        const timers: NodeJS.Timeout[] = [];
        const done = () => {
          timers.forEach(clearTimeout);
          wake = undefined;
          resolve();
        };
        timers.push(setTimeout(done, Math.min(POLL_EVERY_MS, deadline - Date.now())));
        // A notification wakes the wait, but not before MIN_READ_GAP_MS after the last read.
        wake = () => {
          if (signal?.aborted) return done();
          timers.push(setTimeout(done, Math.max(0, lastRead + MIN_READ_GAP_MS - Date.now())));
        };
        if (notified || signal?.aborted) wake();
      });
    }
    return await readAsTenant(deps.db, tenantId, (reader) => findRun(reader, tenantId, runId));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

function settled(status: RunStatus): boolean {
  return isTerminal(status) || status === 'paused';
}
