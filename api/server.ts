import { Client, Connection } from '@temporalio/client';
import { ensureInitialWorkspace } from '../db/bootstrap.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createApp } from './app.js';
import { serviceConfigFromEnv } from './config.js';
import { listen } from './http-server.js';
import { RunEventHub } from './run-event-hub.js';
import { closeSharedEmbedder, sharedEmbedder } from '../activities/embedding/index.js';
import { lazyWorkflowBundle } from '../workers/workers.js';

/**
 * The production API process: configuration from the environment, an external Temporal
 * (TEMPORAL_ADDRESS is required here), and no workers (run `node dist/workers/main.js` beside it).
 */
async function main(): Promise<void> {
  const config = serviceConfigFromEnv();
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required (npm start runs a dev server for you instead)');
  const database = await openDatabase(databaseConfigFromEnv());
  await migrateToLatest(database.db);
  const bootstrap = await ensureInitialWorkspace(database.db, config.initWorkspace, config.initApiKey);
  if (bootstrap.newApiKey) console.log(`[api] management API key: ${bootstrap.newApiKey} (shown once)`);

  const connection = await Connection.connect({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const events = await RunEventHub.start(database);
  const deps = { db: database.db, temporal, events, workflowBundle: lazyWorkflowBundle(), embedder: sharedEmbedder, publicUrl: config.publicUrl };
  const server = await listen(createApp(deps), config.host, config.port);
  console.log(`[api] listening on ${server.url}`);

  const shutdown = async () => {
    await server.close();
    await events.close();
    await closeSharedEmbedder();
    await connection.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}

main().catch((err) => {
  console.error('[api] failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
