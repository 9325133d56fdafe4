import { serviceConfigFromEnv } from '../api/config.js';
import { runProcess } from '../api/run-process.js';
import { databaseConfigFromEnv, dataDirFromEnv } from '../db/config.js';
import { startPlatform } from './platform.js';

/** `npm start`: the API, a worker per task queue and (unless TEMPORAL_ADDRESS is set) a Temporal dev server. */
runProcess('platform', async () => {
  const service = serviceConfigFromEnv();
  const database = databaseConfigFromEnv();
  const dataDir = dataDirFromEnv();
  console.log(`[platform] starting (${database.kind === 'pglite' ? `embedded PGlite in ${database.dataDir}` : 'Postgres from DATABASE_URL'})...`);

  const platform = await startPlatform({ service, database, dataDir });

  console.log(`[platform] API:         ${service.publicUrl}   (OpenAPI: ${service.publicUrl}/openapi.json)`);
  console.log(`[platform] Temporal:    ${platform.temporalAddress}`);
  if (platform.temporalUiUrl) console.log(`[platform] Temporal UI: ${platform.temporalUiUrl}`);
  if (platform.bootstrap.newApiKey) {
    console.log(`[platform] workspace '${service.initWorkspace}' created (${platform.bootstrap.tenantId})`);
    console.log(`[platform] management API key: ${platform.bootstrap.newApiKey}`);
    console.log('[platform] (shown once: store it now)');
  }
  console.log('[platform] ready; Ctrl-C stops');

  return () => platform.stop();
});
