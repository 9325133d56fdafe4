import path from 'node:path';
import { integerSetting } from './integer-settings.js';

/** Where the database lives: an external Postgres when DATABASE_URL is set, else embedded PGlite files. */
export type DatabaseConfig =
  /**
   * `readPoolSize`: the connections of the tenant reads' own pool (db/tenant-reads.ts).
   * `preparedStatements`: repeated statements prepared on their connections (db/statement-cache.ts).
   * `poolIdleMs`: how long a pooled connection may sit unused before it is closed; 0 keeps it open.
   */
  | { kind: 'postgres'; url: string; poolSize: number; readPoolSize: number; preparedStatements: boolean; poolIdleMs: number }
  | { kind: 'pglite'; dataDir: string };

export function databaseConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  if (env.DATABASE_URL) {
    const poolSize = integerSetting('DATABASE_POOL_SIZE', env) ?? 10;
    return {
      kind: 'postgres',
      url: env.DATABASE_URL,
      poolSize,
      readPoolSize: integerSetting('DATABASE_READ_POOL_SIZE', env) ?? poolSize,
      preparedStatements: preparedStatementsFromEnv(env),
      poolIdleMs: integerSetting('DATABASE_POOL_IDLE_MS', env) ?? DEFAULT_POOL_IDLE_MS,
    };
  }
  return { kind: 'pglite', dataDir: path.join(dataDirFromEnv(env), 'pglite') };
}

/**
 * Ten minutes, as PgBouncer's `server_idle_timeout` and HikariCP's `idleTimeout`, where node-postgres
 * closes a connection after 10 s unused: a platform with a request every few seconds then opened a
 * connection for most of them (4.7 ms on loopback without TLS or a password, more over a network) and
 * lost the statements prepared on it (db/statement-cache.ts). An idle connection costs Postgres a backend
 * and its prepared statements' memory (a few MB at most).
 */
const DEFAULT_POOL_IDLE_MS = 600_000;

/** DATABASE_PREPARED_STATEMENTS: `on` (the default) or `off`. */
function preparedStatementsFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env.DATABASE_PREPARED_STATEMENTS?.trim();
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  throw new Error(`DATABASE_PREPARED_STATEMENTS must be 'on' or 'off', not '${value}'`);
}

/** The folder for every file the embedded defaults keep: PGlite's database, Temporal's SQLite file. */
export function dataDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DATA_DIR ?? '.data');
}

/**
 * When a silent Postgres connection sends its first TCP keepalive probe (the system's default is 2 hours).
 * Pooled connections idle for minutes (DATABASE_POOL_IDLE_MS) and the LISTEN connection for good, and load
 * balancers and NAT drop flows silent for less (AWS's NLB after 350 s, Azure's after 4 minutes): the next
 * query would wait on a dead flow, and a LISTEN would stop hearing notifications (API key revocations among
 * them) without noticing. Probes every 30 s keep such flows alive, and find a vanished server.
 */
export const TCP_KEEPALIVE_DELAY_MS = 30_000;
