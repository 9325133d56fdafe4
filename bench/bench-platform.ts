import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { serviceConfigFromEnv } from '../api/config.js';
import { databaseConfigFromEnv, type DatabaseConfig } from '../db/config.js';
import { createTenant } from '../db/tenants.js';
import { freePort } from '../test/support/ports.js';
import { startPlatform, type Platform } from '../workers/platform.js';

export interface BenchPlatform {
  platform: Platform;
  database: DatabaseConfig;
  /** The workspace to load, and its management key. */
  workspace: { tenantId: string; apiKey: string };
  /** Deletes a throwaway workspace, stops the platform and removes its files. */
  stop(): Promise<void>;
}

/**
 * The whole platform in this process, as `npm start` runs it: DATABASE_URL's Postgres or a throwaway
 * PGlite, TEMPORAL_ADDRESS or a dev server on free ports with an in-memory store. The workspace is the
 * initial one when this start created it (a fresh database), else a new `bench-…` one deleted at the end,
 * so an existing database's own data stays out of the measurement.
 */
export async function startBenchPlatform(label: string): Promise<BenchPlatform> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'agent-platform-bench-'));
  const service = { ...serviceConfigFromEnv(), port: 0 };
  const database: DatabaseConfig = process.env.DATABASE_URL ? databaseConfigFromEnv() : { kind: 'pglite', dataDir: path.join(tmp, 'pglite') };
  const temporalDev = service.temporalAddress ? undefined : { port: await freePort(), ui_port: await freePort(), db_file: null };
  console.log(`[bench] starting the platform (${database.kind}, Temporal ${temporalDev ? 'dev server' : service.temporalAddress})...`);
  const platform = await startPlatform({ service, database, dataDir: tmp, temporalDev });

  let workspace = { tenantId: platform.bootstrap.tenantId, apiKey: platform.bootstrap.newApiKey ?? '' };
  let throwaway: string | undefined;
  if (!platform.bootstrap.newApiKey) {
    const { tenant, apiKey } = await createTenant(platform.db, `bench-${label}-${new Date().toISOString()}`);
    workspace = { tenantId: tenant.id, apiKey };
    throwaway = tenant.id;
  }
  return {
    platform,
    database,
    workspace,
    stop: async () => {
      // Everything of the workspace goes with it (on delete cascade).
      if (throwaway) await platform.db.deleteFrom('tenants').where('id', '=', throwaway).execute();
      await platform.stop();
      await fs.rm(tmp, { recursive: true, force: true });
    },
  };
}
