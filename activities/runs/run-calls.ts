import type { RunCalls } from './types.js';

export const RUN_CALLS_VARIABLE = 'RUN_CALLS';

/**
 * RUN_CALLS: how runs started on this worker make their model turns and tool calls.
 *
 * - `activities` (the default): each call is an activity, scheduled by the Temporal server and picked
 *   up by any worker. It heartbeats, so a cancel reaches a long model call within a second or two, a
 *   dead worker's call is retried elsewhere within seconds, and the Web UI shows it as a pending activity.
 * - `local`: each call is a local activity, run by the worker that runs the workflow task, in that task;
 *   a whole run without pauses is one workflow task. A run then takes about what a bare workflow of
 *   three activities does (docs/performance.md: ~40 % lower latency, ~25 % more runs per second on the
 *   benchmark). What it gives up: a cancel or a signal reaches a run only between calls or at
 *   the workflow task's heartbeat (about every 8 s of a long call); a dead worker's calls run again
 *   after the workflow task's timeout (10 s), each answering what Postgres recorded where it got that far
 *   (a model turn is not paid twice, a finished tool call is not made again); the Web UI shows the calls
 *   as markers once they are done.
 *
 * Read by `beginRun`, whose result is in the run's history: a run keeps the way it started with on
 * every worker and on replay, whatever the setting says later.
 */
export function runCallsFromEnv(env: NodeJS.ProcessEnv = process.env): RunCalls {
  const value = env[RUN_CALLS_VARIABLE]?.trim();
  if (value === undefined || value === '' || value === 'activities') return 'activities';
  if (value === 'local') return 'local';
  throw new Error(`${RUN_CALLS_VARIABLE} must be 'activities' or 'local', not '${value}'`);
}
