import { ensureInitialWorkspace } from '../db/bootstrap.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createApp } from './app.js';
import { serviceConfigFromEnv } from './config.js';
import { createAppDeps } from './deps.js';
import { listen } from './http-server.js';
import { runProcess } from './run-process.js';
import { closeSharedEmbedder } from '../activities/embedding/index.js';

/**
 * The production API process: configuration from the environment, an external Temporal
 * (TEMPORAL_ADDRESS is required here), and no workers: run the worker process beside it, which also
 * does the replays the API asks for.
 */
runProcess('api', async () => {
  const config = serviceConfigFromEnv();
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required (npm start runs a dev server for you instead)');
  const database = await openDatabase(databaseConfigFromEnv());
  await migrateToLatest(database.db);
  const bootstrap = await ensureInitialWorkspace(database.db, config.initWorkspace, config.initApiKey);
  if (bootstrap.newApiKey) console.log(`[api] management API key: ${bootstrap.newApiKey} (shown once)`);

  const appDeps = await createAppDeps({
    database,
    temporalAddress: config.temporalAddress,
    temporalNamespace: config.temporalNamespace,
    publicUrl: config.publicUrl,
  });
  const server = await listen(createApp(appDeps.deps), config.host, config.port);
  console.log(`[api] listening on ${server.url}`);

  return async () => {
    await server.close();
    await appDeps.close();
    await closeSharedEmbedder();
    await database.close();
  };
});
