import path from 'node:path';

/** Where the database lives: an external Postgres when DATABASE_URL is set, else embedded PGlite files. */
export type DatabaseConfig =
  | { kind: 'postgres'; url: string; poolSize: number }
  | { kind: 'pglite'; dataDir: string };

export function databaseConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  if (env.DATABASE_URL) {
    return { kind: 'postgres', url: env.DATABASE_URL, poolSize: Number(env.DATABASE_POOL_SIZE ?? 10) };
  }
  return { kind: 'pglite', dataDir: path.join(dataDirFromEnv(env), 'pglite') };
}

/** The folder for every file the embedded defaults keep: PGlite's database, Temporal's SQLite file. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DATA_DIR ?? '.data');
}
