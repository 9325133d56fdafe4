import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { RunRef } from './runs/types.js';

/**
 * Fault injection for the crash tests (test/runs-crash-points.test.ts): named places in the run's
 * bookkeeping where a worker can be made to stop, so a test can SIGKILL it exactly there.
 *
 * Armed only when the worker's environment has AGENT_PLATFORM_CRASH_DIR; unarmed, `crashPoint` returns
 * at once without touching anything. Armed, a workspace takes part when `<dir>/armed/<tenantId>` names a
 * point (so one worker can hold runs of several workspaces at several points). The first time one of its
 * runs reaches that point, the worker writes `<dir>/<point>/<runId>` (its pid) and holds there for good,
 * heartbeating, so no timeout hands the activity to this same worker again: only a kill ends the hold.
 * Once the marker exists another worker's arrival lets the run through and writes `<runId>.passed` (its pid),
 * which shows the test the retry ran on another worker.
 */
export type CrashPoint =
  /** A model turn streamed and its `message.completed` stored; its result not yet in Temporal's history. */
  | 'model-turn.unrecorded'
  /** A step's end and `tool_call.completed` written, the transaction not committed. */
  | 'complete-step.before-commit'
  /** The same, committed; the activity not yet returned. */
  | 'complete-step.after-commit'
  /** The run's end, usage and terminal event written, the transaction not committed. */
  | 'finish-run.before-commit'
  /** The same, committed; the activity not yet returned. */
  | 'finish-run.after-commit';

const CRASH_DIR = process.env.AGENT_PLATFORM_CRASH_DIR;

/** Holds the run here for good if its workspace is armed for `point` and the run has not been held here before. */
export function crashPoint(point: CrashPoint, run: RunRef): Promise<void> | undefined {
  return CRASH_DIR ? reach(CRASH_DIR, point, run) : undefined;
}

async function reach(dir: string, point: CrashPoint, { tenantId, runId }: RunRef): Promise<void> {
  const armed = await fs.readFile(path.join(dir, 'armed', tenantId), 'utf8').catch(() => null);
  if (armed?.trim() !== point) return;
  const marker = path.join(dir, point, runId);
  await fs.mkdir(path.dirname(marker), { recursive: true });
  try {
    await fs.writeFile(marker, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // A retry on the worker that holds the run (its start-to-close timeout passed before the kill) is
    // held too: only another worker may let the run through.
    if ((await fs.readFile(marker, 'utf8')) !== String(process.pid)) {
      await fs.writeFile(`${marker}.passed`, String(process.pid));
      return;
    }
  }
  // A model turn or tool call has a 5 s heartbeat timeout; without heartbeats it would be retried here.
  const context = Context.current();
  setInterval(() => context.heartbeat(), 1000);
  await new Promise<never>(() => {});
}
