import { serviceConfigFromEnv } from '../api/config.js';
import { runProcess } from '../api/run-process.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { startWorkers } from './workers.js';
import { closeSharedEmbedder } from '../activities/embedding/index.js';
import { ALL_TASK_QUEUES } from '../workflows/task-queues.js';

/** The production worker process: polls every task queue of an external Temporal. */
runProcess('worker', async () => {
  const config = serviceConfigFromEnv();
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is required (npm start runs a dev server for you instead)');
  const databaseConfig = databaseConfigFromEnv();
  if (databaseConfig.kind === 'pglite') {
    throw new Error('a separate worker needs DATABASE_URL: embedded PGlite belongs to one process (use npm start)');
  }
  const database = await openDatabase(databaseConfig);
  await migrateToLatest(database.db);
  const workers = await startWorkers({ address: config.temporalAddress, namespace: config.temporalNamespace, db: database.db });
  console.log(`[worker] polling ${ALL_TASK_QUEUES.join(', ')} and its weights' re-embedding batches on ${config.temporalAddress}`);

  return async () => {
    await workers.shutdown();
    await closeSharedEmbedder();
    await database.close();
  };
});
