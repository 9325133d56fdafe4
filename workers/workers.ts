import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Runtime, type LogLevel, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { IllegalStateError } from '@temporalio/common';
import { createActivities } from '../activities/index.js';
import { embeddingThreadsFromEnv } from '../activities/embedding/config.js';
import { sharedEmbedder } from '../activities/embedding/index.js';
import { priceTableFromEnv } from '../activities/models/prices.js';
import { secretKeyringFromEnv } from '../activities/secrets/secrets-key.js';
import { outboundPolicyFromEnv } from '../activities/tools/outbound-guard.js';
import { runCallsFromEnv } from '../activities/runs/run-calls.js';
import type { Db } from '../db/database.js';
import { integerSetting } from '../db/integer-settings.js';
import { ALL_TASK_QUEUES, TASK_QUEUES, type TaskQueue } from '../workflows/task-queues.js';
import { WorkerLogger } from './worker-logger.js';
import { createWorkflowWorker } from './activation-watchdog.js';
import { createReembedBatchWorker, startReembeddingWhenNeeded } from './reembedding.js';
import { ensureRunHistoryArchiver } from './run-history-archiver.js';
import { sweepStrandedWorkEvery } from './stranded-work/sweep.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.js', import.meta.url));

let runtimeInstalled = false;

/**
 * Bundles the workflow code once; every worker of the process (and the replays it runs) share the
 * bundle. Another module of workflows (a benchmark's) bundles the same way from its own path.
 */
export async function bundleWorkflows(workflowsPath = WORKFLOWS_PATH): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
}

/**
 * What one queue's worker does differently. Replays are CPU-bound work on a tenant's behalf: a burst of
 * them waits in its queue, one at a time per worker process, instead of crowding out runs.
 */
const QUEUE_OPTIONS: Partial<Record<TaskQueue, Partial<WorkerOptions>>> = {
  [TASK_QUEUES.replays]: { maxConcurrentActivityTaskExecutions: 1 },
};

/**
 * Activities one worker runs at once per task queue: the SDK's default of 100 unless
 * WORKER_MAX_CONCURRENT_ACTIVITIES says otherwise (model turns mostly wait on the network, so a worker
 * with memory to spare can take more; the crash tests hold more than 100 at once on purpose).
 */
function activitySlots(env: NodeJS.ProcessEnv): number {
  return integerSetting('WORKER_MAX_CONCURRENT_ACTIVITIES', env) ?? 100;
}

/** RUN_HISTORY_ARCHIVER_CHECK_MS: how often a worker process makes sure the archiver runs (default a minute). */
function archiverCheckMs(env: NodeJS.ProcessEnv): number {
  return integerSetting('RUN_HISTORY_ARCHIVER_CHECK_MS', env) ?? 60_000;
}

/** STRANDED_WORK_CHECK_MS: how often a worker process looks for work recorded but never started (default a minute). */
function strandedWorkCheckMs(env: NodeJS.ProcessEnv): number {
  return integerSetting('STRANDED_WORK_CHECK_MS', env) ?? 60_000;
}

export interface RunningWorkers {
  /** The connection the workers poll on: a client on it may start workflows eagerly on them (activities/eager-start.ts). */
  connection: NativeConnection;
  /** Asks every worker to finish its in-flight tasks and stop; resolves when they have. */
  shutdown(): Promise<void>;
}

/**
 * Starts one worker per task queue on one connection, and one for the re-embedding batches of this
 * process's embedder's weights, and keeps them polling until shutdown.
 */
export async function startWorkers(options: {
  address: string;
  namespace: string;
  db: Db;
  bundle?: WorkflowBundle;
  env?: NodeJS.ProcessEnv;
}): Promise<RunningWorkers> {
  if (!runtimeInstalled) {
    // The SDK's default runtime logs every poll at INFO; warnings are what an operator needs here.
    try {
      Runtime.install({ logger: new WorkerLogger(temporalLogLevel(options.env ?? process.env)) });
    } catch (err) {
      // Something else in this process (a test's Temporal environment) has a runtime running already.
      if (!(err instanceof IllegalStateError)) throw err;
    }
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect({ address: options.address });
  // Activities that talk to Temporal themselves (the history mirror) use an ordinary client.
  const clientConnection = await Connection.connect({ address: options.address });
  const temporal = new Client({ connection: clientConnection, namespace: options.namespace });
  const bundle = options.bundle ?? (await bundleWorkflows());
  const env = options.env ?? process.env;
  priceTableFromEnv(env); // a malformed MODEL_PRICES fails here, not at the end of the first run
  secretKeyringFromEnv(env); // and a malformed SECRETS_KEY here, not at the first model call
  const activities = createActivities({
    db: options.db,
    temporal,
    outboundPolicy: outboundPolicyFromEnv(env),
    embedder: sharedEmbedder,
    workflowBundle: bundle,
    runCalls: runCallsFromEnv(env),
  });
  const workers = await Promise.all([
    ...ALL_TASK_QUEUES.map((taskQueue) =>
      createWorkflowWorker({
        connection,
        namespace: options.namespace,
        taskQueue,
        workflowBundle: bundle,
        activities,
        // When the worker that cached a run is gone, its next task goes to any worker after this long.
        stickyQueueScheduleToStartTimeout: '3 seconds',
        maxConcurrentActivityTaskExecutions: activitySlots(env),
        // A run's bookkeeping steps are local activities (workflows/agent-run.ts), and a workflow task keeps
        // its slot while they run: as many of both as of activities, so runs waiting on the database do not
        // starve the rest of workflow task slots (the SDK's default is 40).
        maxConcurrentLocalActivityExecutions: activitySlots(env),
        maxConcurrentWorkflowTaskExecutions: activitySlots(env),
        ...QUEUE_OPTIONS[taskQueue],
      }, env),
    ),
    createReembedBatchWorker({ connection, namespace: options.namespace, activities, embedder: sharedEmbedder(), embeddingThreads: embeddingThreadsFromEnv(env) }),
  ]);
  const running = workers.map((worker) => worker.run());
  // Finished runs wait in Postgres for their histories to be archived; without the archiver they only wait.
  // Asked again every so often, not only at start: an archiver that ended (terminated from the Web UI, or
  // failed) would otherwise leave histories waiting until some worker restarts.
  const ensureArchiver = () => ensureRunHistoryArchiver(temporal).catch((err) => console.error('[worker] could not start the run-history archiver:', err));
  await ensureArchiver();
  const archiverCheck = setInterval(() => void ensureArchiver(), archiverCheckMs(env));
  archiverCheck.unref();
  // Runs, documents and experiments recorded by a process that stopped before starting their workflows.
  const stopSweeping = sweepStrandedWorkEvery(options.db, temporal, strandedWorkCheckMs(env));
  // Searches skip vectors of other weights until they are re-embedded; a failure here only delays that.
  await startReembeddingWhenNeeded(options.db, temporal, sharedEmbedder()).catch((err) => console.error('[worker] could not start the re-embedding:', err));
  return {
    connection,
    async shutdown() {
      clearInterval(archiverCheck);
      await stopSweeping();
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(running);
      await connection.close();
      await clientConnection.close();
    },
  };
}

/** TEMPORAL_LOG_LEVEL: the SDK's log level (TRACE, DEBUG, INFO, WARN, ERROR); WARN by default. */
function temporalLogLevel(env: NodeJS.ProcessEnv): LogLevel {
  const level = env.TEMPORAL_LOG_LEVEL?.toUpperCase();
  return level === 'TRACE' || level === 'DEBUG' || level === 'INFO' || level === 'ERROR' ? level : 'WARN';
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: unknown) => console.warn('[bundler]', message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error('[bundler]', message, meta ?? ''),
};
