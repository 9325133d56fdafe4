import { Worker, type WorkerOptions } from '@temporalio/worker';
import { integerSetting } from '../db/integer-settings.js';

/**
 * Workflow workers without Node's per-call vm watchdog, unless WORKFLOW_ACTIVATION_TIMEOUT_MS asks for one.
 *
 * Why: the SDK runs workflow code in a `vm` context and passes its `isolateExecutionTimeout` (5 s) to every
 * call into it, several per activation. Node enforces a vm timeout with a watchdog that creates and joins a
 * thread per call (nodejs/node#47739, unmerged): 125 µs a call against 1.3 µs without, measured here on
 * Node 24. In a CPU profile of the runs benchmark that native call was 52 % of the workflow thread's time,
 * and a run's latency fell by a fifth without it (docs/performance.md).
 *
 * What it guarded: a workflow activation whose synchronous JavaScript never ends (a loop in workflow code)
 * is interrupted after the timeout, so the worker thread lives on for other workflows. The platform's
 * workflows are its own code and interpret agents as data, each step waiting on an activity or a timer
 * (docs/performance.md). Without the watchdog such a bug would hold the queue's workflow thread, and with
 * it every workflow of that queue in the process, until the process restarts (its stop gives up after a
 * minute: api/run-process.ts); its workflow task would then time out and take the next worker down the
 * same way. An operator who prefers the guard sets the timeout, as the SDK's default does.
 *
 * How: `Worker.createWorkflowCreator` is the SDK's protected hook for the workflow sandbox, given the
 * worker's compiled options; the timeout is set there (the SDK's public options do not take one), and
 * without one Node starts no watchdog.
 */
export function createWorkflowWorker(options: WorkerOptions, env: NodeJS.ProcessEnv): Promise<Worker> {
  return workerWithActivationTimeout(activationTimeoutMs(env) || undefined).create(options);
}

/** WORKFLOW_ACTIVATION_TIMEOUT_MS: milliseconds one activation's JavaScript may run; 0 (the default) sets no limit, and no watchdog. */
function activationTimeoutMs(env: NodeJS.ProcessEnv): number {
  return integerSetting('WORKFLOW_ACTIVATION_TIMEOUT_MS', env) ?? 0;
}

function workerWithActivationTimeout(timeoutMs: number | undefined): typeof Worker {
  return class extends Worker {
    protected static override createWorkflowCreator(...[bundle, options, logger]: Parameters<(typeof Worker)['createWorkflowCreator']>) {
      // In debug mode the SDK sets no practical limit, so that a debugger's pause is not cut short: kept.
      if (options.debugMode) return super.createWorkflowCreator(bundle, options, logger);
      return super.createWorkflowCreator(bundle, { ...options, isolateExecutionTimeoutMs: timeoutMs as number }, logger);
    }
  };
}
