import fs from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { TCP_KEEPALIVE_DELAY_MS, type DatabaseConfig } from './config.js';
import { IdleCheckoutPool } from './idle-checkout-pool.js';
import { PostgresListener } from './postgres-listener.js';
import type { Database } from './schema.js';
import { attachTenantReadPool } from './tenant-reads.js';
import { readIsoTimestamptz } from './timestamptz.js';
import { poolClientClass } from './statement-cache.js';
import { attachTenantStatements } from './tenant-statement.js';
import { startingTenantTransactions } from './tenant-transaction.js';

type PostgresConfig = Extract<DatabaseConfig, { kind: 'postgres' }>;

export type Db = Kysely<Database>;

/** An open database: the Kysely handle, what it runs on, LISTEN, and how to close it. */
export interface OpenDatabase {
  db: Db;
  kind: DatabaseConfig['kind'];
  /**
   * Calls `onPayload` for every NOTIFY on `channel` until the returned function is called, and
   * `onListening(false)`/`(true)` when the listening connection is lost and back (never on PGlite, in-process).
   */
  listen(channel: string, onPayload: (payload: string) => void, onListening?: (listening: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// Postgres `bigint` (count(*) and friends) as a JS number: our counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// `timestamptz` in Postgres' usual form read digit by digit, anything else by node-postgres' own parser (db/timestamptz.ts).
const parseTimestamptzAsPgDoes = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (text) => readIsoTimestamptz(text) ?? parseTimestamptzAsPgDoes(text));

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    const pool = openPool(config, config.poolSize);
    const db = new Kysely<Database>({ dialect: startingTenantTransactions(new PostgresDialect({ pool })) });
    attachTenantStatements(db, pool);
    // Tenant reads have a pool of their own (db/tenant-reads.ts); it opens connections only when used.
    const readPool = attachTenantReadPool(db, openPool(config, config.readPoolSize));
    const listeners = new Set<PostgresListener>();
    return {
      db,
      kind: 'postgres',
      listen: async (channel, onPayload, onListening) => {
        const listener = await PostgresListener.start(config.url, channel, onPayload, onListening);
        listeners.add(listener);
        return async () => {
          listeners.delete(listener);
          await listener.stop();
        };
      },
      close: async () => {
        await Promise.all([...listeners].map((listener) => listener.stop()));
        await Promise.all([db.destroy(), readPool.destroy()]);
      },
    };
  }
  // PGlite creates its own folder but not the parents; the vector extension must be named on every open.
  await fs.mkdir(config.dataDir, { recursive: true });
  const pglite = await PGlite.create({ dataDir: config.dataDir, extensions: { vector } });
  // PGlite has one connection. Kysely's PGlite adapter declares that, so Kysely holds a mutex from
  // acquiring the connection to releasing it: a transaction's begin..commit never interleaves with
  // another request's statements, which wait their turn.
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    kind: 'pglite',
    listen: async (channel, onPayload) => {
      const unlisten = await pglite.listen(channel, onPayload);
      return () => unlisten();
    },
    close: async () => {
      // Waiting for the connection lets whatever holds it, or queued for it, finish first;
      // destroying then closes PGlite too (Kysely's PGlite driver does that).
      await db.connection().execute(async () => {});
      await db.destroy();
    },
  };
}

function openPool(config: PostgresConfig, size: number): IdleCheckoutPool {
  // keepAlive: a connection to a host that vanished (a failover without a reset) is noticed by TCP, and a
  // silent flow is not dropped by NAT on the way (TCP_KEEPALIVE_DELAY_MS).
  const pool = new IdleCheckoutPool({
    connectionString: config.url,
    max: size,
    idleTimeoutMillis: config.poolIdleMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: TCP_KEEPALIVE_DELAY_MS,
    Client: poolClientClass(config.preparedStatements),
  });
  // When Postgres restarts or drops connections, pg emits 'error' on every client it cut — idle ones
  // through the pool, checked-out ones on the client itself — and an 'error' nobody listens to crashes
  // the process. Logged instead: the query in flight fails on its own, and the pool discards the dead
  // client on release, so the next query opens a fresh connection.
  pool.on('error', (err) => console.error('[db] idle connection lost:', err.message));
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** True when the database answers a trivial query. */
export async function isDatabaseReachable(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
