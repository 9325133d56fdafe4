import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { TASK_QUEUES } from './task-queues.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.js', import.meta.url));

let runtimeInstalled = false;

/** Bundles the workflow code once; every worker of the process shares the bundle. */
export async function bundleWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
}

export interface RunningWorkers {
  /** Asks every worker to finish its in-flight tasks and stop; resolves when they have. */
  shutdown(): Promise<void>;
}

/** Starts one worker per task queue on one connection and keeps them polling until shutdown. */
export async function startWorkers(options: {
  address: string;
  namespace: string;
  deps: ActivityDeps;
  bundle?: WorkflowBundle;
}): Promise<RunningWorkers> {
  if (!runtimeInstalled) {
    // The SDK's default runtime logs every poll at INFO; warnings are what an operator needs here.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect({ address: options.address });
  const bundle = options.bundle ?? (await bundleWorkflows());
  const activities = createActivities(options.deps);
  const workers = await Promise.all(
    TASK_QUEUES.map((taskQueue) =>
      Worker.create({ connection, namespace: options.namespace, taskQueue, workflowBundle: bundle, activities }),
    ),
  );
  const running = workers.map((worker) => worker.run());
  return {
    async shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(running);
      await connection.close();
    },
  };
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: unknown) => console.warn('[bundler]', message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error('[bundler]', message, meta ?? ''),
};
