import path from 'node:path';

/** Where the database lives: an external Postgres when DATABASE_URL is set, else embedded PGlite files. */
export type DatabaseConfig =
  /** `readPoolSize`: the connections of the tenant reads' own pool (db/tenant-reads.ts). */
  | { kind: 'postgres'; url: string; poolSize: number; readPoolSize: number }
  | { kind: 'pglite'; dataDir: string };

export function databaseConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  if (env.DATABASE_URL) {
    const poolSize = connectionCount(env, 'DATABASE_POOL_SIZE', 10);
    return { kind: 'postgres', url: env.DATABASE_URL, poolSize, readPoolSize: connectionCount(env, 'DATABASE_READ_POOL_SIZE', poolSize) };
  }
  return { kind: 'pglite', dataDir: path.join(dataDirFromEnv(env), 'pglite') };
}

/** A pool size from the environment: unset is `fallback`; anything but a positive integer fails at start, not as a pool of NaN. */
function connectionCount(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1) throw new Error(`${name} must be a positive integer, not '${raw}'`);
  return count;
}

/** The folder for every file the embedded defaults keep: PGlite's database, Temporal's SQLite file. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DATA_DIR ?? '.data');
}
