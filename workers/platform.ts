import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { ServiceConfig } from '../api/config.js';
import { createApp } from '../api/app.js';
import { createAppDeps } from '../api/deps.js';
import { listen } from '../api/http-server.js';
import { ensureInitialWorkspace, type BootstrapResult } from '../db/bootstrap.js';
import type { DatabaseConfig } from '../db/config.js';
import { openDatabase, type Db, type OpenDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { loadTemporalDevConfig, startTemporalDevServer, type TemporalDevConfig, type TemporalDevServer } from './temporal-dev-server.js';
import { bundleWorkflows, startWorkers, type RunningWorkers } from './workers.js';
import { closeSharedEmbedder } from '../activities/embedding/index.js';
import { EMBEDDED_KEY_FILE, useEmbeddedSecretsKey } from '../activities/secrets/secrets-key.js';

/** The whole platform in one process, as `npm start` and the test suite run it. */
export interface Platform {
  apiUrl: string;
  temporalAddress: string;
  /** The Web UI of the dev server this process started; undefined with an external Temporal. */
  temporalUiUrl: string | undefined;
  db: Db;
  databaseKind: OpenDatabase['kind'];
  /** LISTEN on the database: what the API's live streams are told of new events by. */
  listen: OpenDatabase['listen'];
  temporal: Client;
  /** The client the API starts runs with: on the workers' connection when they run in this process (eager start). */
  runStarter: Client;
  /** The workflow code bundle the workers run (and replay stored histories against). */
  workflowBundle: () => Promise<WorkflowBundle>;
  bootstrap: BootstrapResult;
  stop(): Promise<void>;
}

export interface PlatformOptions {
  service: ServiceConfig;
  database: DatabaseConfig;
  dataDir: string;
  /** Overrides for temporal-dev.yaml, used when service.temporalAddress is unset. */
  temporalDev?: Partial<TemporalDevConfig>;
  /** False leaves the task queues to worker processes of their own (the tests' crash scenarios). */
  workers?: boolean;
}

/**
 * Starts, in order: the Temporal dev server (unless TEMPORAL_ADDRESS is set), the database and its
 * migrations, the initial workspace, a worker per task queue, and the API. stop() undoes it in reverse.
 */
export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const stack: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const undo of stack.reverse()) await undo().catch((err) => console.error('[platform] stop:', err));
  };
  try {
    let devServer: TemporalDevServer | undefined;
    if (!options.service.temporalAddress) {
      devServer = await startTemporalDevServer({ ...loadTemporalDevConfig(), ...options.temporalDev }, options.dataDir);
      stack.push(() => devServer!.stop());
    }
    const temporalAddress = options.service.temporalAddress ?? devServer!.address;
    const namespace = devServer?.namespace ?? options.service.temporalNamespace;

    const database = await openDatabase(options.database);
    stack.push(() => database.close());
    // The embedded default keeps its secrets key beside its data, so provider keys just work (docs/providers.md).
    if (database.kind === 'pglite' && useEmbeddedSecretsKey(options.dataDir) === 'generated') {
      console.log(`[platform] generated the secrets key in ${path.join(options.dataDir, EMBEDDED_KEY_FILE)} (keep it with the data)`);
    }
    stack.push(() => closeSharedEmbedder());
    await migrateToLatest(database.db);
    const bootstrap = await ensureInitialWorkspace(database.db, options.service.initWorkspace, options.service.initApiKey);

    const bundle = await bundleWorkflows();
    let workers: RunningWorkers | undefined;
    if (options.workers !== false) {
      workers = await startWorkers({ address: temporalAddress, namespace, db: database.db, bundle });
      stack.push(() => workers!.shutdown());
    }

    // Runs the API starts go straight to these workers (eager start: AppDeps.runStarter).
    const appDeps = await createAppDeps({
      database,
      temporalAddress,
      temporalNamespace: namespace,
      publicUrl: options.service.publicUrl,
      workersConnection: workers?.connection,
    });
    stack.push(() => appDeps.close());
    const { deps } = appDeps;
    const api = await listen(createApp(deps), options.service.host, options.service.port);
    stack.push(() => api.close());
    // Port 0 asks for any free port; only now is the real address known.
    if (options.service.port === 0) deps.publicUrl = api.url;

    return {
      apiUrl: api.url,
      temporalAddress,
      temporalUiUrl: devServer?.uiUrl,
      db: database.db,
      databaseKind: database.kind,
      listen: database.listen,
      temporal: deps.temporal,
      runStarter: deps.runStarter,
      workflowBundle: async () => bundle,
      bootstrap,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export type { RunningWorkers };
