import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely, sql, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import type pg from 'pg';
import type { IdleCheckoutPool } from './idle-checkout-pool.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';
import { TENANT_ROLE, withTenant, type TenantScoped } from './tenant-transaction.js';
import { postgresDialectWithDriver } from './wrapped-driver.js';

/**
 * Reads as one tenant without a transaction.
 *
 * Why: `withTenant` costs a plain `GET` three round trips (`begin` carrying the settings, the query,
 * `commit`) where a bare server pays one, and the round trips were most of the gap (docs/performance.md).
 * A read needs no transaction: under read committed every statement takes its own snapshot anyway, so
 * read-only work sees outside a transaction what it would have seen inside one. What a read does need is
 * the row-level security wall, which is the role and `app.tenant_id`.
 *
 * How: a second pool of connections that only reads. Each connection is set once, per session, to the
 * tenant role and to read-only (`default_transaction_read_only`: a write, or a `for update`, fails instead
 * of running outside a transaction), and keeps the tenant it last read for. A read for that tenant is
 * the query alone; another tenant's is one `set_config` first. The setting is remembered only after its
 * statement succeeded, and every statement on the pool checks it against the tenant of the
 * `readAsTenant` it runs in: a statement outside one throws rather than run as whoever read last.
 *
 * The pool's driver is this module's own, straight on node-postgres' pool, and `directRead` runs a
 * compiled read on it without Kysely's executor around it: those layers (connection provider, runtime
 * driver, Kysely's own Postgres driver) were ~60 µs of a ~400 µs list request's CPU. Both paths keep
 * the tenant per pooled client, in one place (TenantReadPool).
 *
 * PGlite has one connection and no pool: there a read is `withTenant`'s transaction, made read-only.
 */

/** The read pool of each open Postgres database (db/database.ts attaches it). */
const readPools = new WeakMap<Db, Db>();
/** The pool behind each read pool's Kysely handle, for `directRead`. */
const tenantReadPools = new WeakMap<Db, TenantReadPool>();

/** The tenant the current `readAsTenant` reads as. */
const readingTenant = new AsyncLocalStorage<string>();

/** Opens `db`'s tenant read pool on `pool` (db/database.ts). */
export function attachTenantReadPool(db: Db, pool: IdleCheckoutPool): Db {
  const reads = new TenantReadPool(pool);
  const readPool = new Kysely<Database>({ dialect: postgresDialectWithDriver(() => new TenantReadDriver(reads)) });
  readPools.set(db, readPool);
  tenantReadPools.set(readPool, reads);
  return readPool;
}

/**
 * Runs read-only `work` as `tenantId`: its queries see only that tenant's rows and may not write. Each
 * statement stands alone (no transaction), so work that must read a consistent set of rows, or write,
 * takes `withTenant`.
 */
export async function readAsTenant<T>(db: Db, tenantId: string, work: (reader: TenantScoped) => Promise<T>): Promise<T> {
  const readPool = readPools.get(db);
  if (!readPool) {
    return withTenant(db, tenantId, async (tx) => {
      await sql`set transaction read only`.execute(tx);
      return work(tx);
    });
  }
  return readingTenant.run(tenantId, () => work(readPool as TenantScoped));
}

/**
 * The rows of a compiled read run straight on the tenant read pool that `reader` is, as the current
 * `readAsTenant`'s tenant; undefined when `reader` is not such a pool (a transaction, PGlite), for the
 * caller to run the query through Kysely instead. For hot reads (db/prepared-query.ts).
 */
export function directRead(reader: Db): ((sql: string, parameters: readonly unknown[]) => Promise<unknown[]>) | undefined {
  const reads = tenantReadPools.get(reader);
  return reads && ((text, parameters) => reads.rows(text, parameters));
}

/** The clients of the read pool, each remembering the tenant its session reads as. */
class TenantReadPool {
  /** The tenant each pooled client's session reads as; absent until a setting statement has succeeded. */
  private readonly tenants = new WeakMap<pg.PoolClient, string>();

  constructor(readonly pool: IdleCheckoutPool) {}

  /** One read on a client of the pool, checked out for it. */
  async rows(text: string, parameters: readonly unknown[]): Promise<unknown[]> {
    const client = await this.pool.connect();
    try {
      return await this.query(client, text, parameters);
    } finally {
      client.release();
    }
  }

  /** One read on `client` as the current `readAsTenant`'s tenant, setting the session to it first when it read as another. */
  async query(client: pg.PoolClient, text: string, parameters: readonly unknown[]): Promise<unknown[]> {
    await this.readAs(client, tenantOfThisRead());
    return (await client.query(text, parameters as unknown[])).rows;
  }

  private async readAs(client: pg.PoolClient, tenantId: string): Promise<void> {
    if (this.tenants.get(client) === tenantId) return;
    this.tenants.delete(client);
    // Role and read-only are the same every time; setting them with the tenant keeps it one statement.
    await client.query(
      `select set_config('role', $1, false), set_config('default_transaction_read_only', 'on', false), set_config('app.tenant_id', $2, false)`,
      [TENANT_ROLE, tenantId],
    );
    this.tenants.set(client, tenantId);
  }
}

/** Kysely's driver for the read pool: connections that read as the current `readAsTenant`'s tenant. */
class TenantReadDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, TenantReadConnection>();

  constructor(private readonly reads: TenantReadPool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.reads.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new TenantReadConnection(this.reads, client);
      this.connections.set(client, connection);
    }
    return connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as TenantReadConnection).client.release();
  }

  beginTransaction(): Promise<void> {
    throw new Error('tenant reads run without a transaction: use withTenant');
  }

  commitTransaction(): Promise<void> {
    throw new Error('tenant reads run without a transaction');
  }

  rollbackTransaction(): Promise<void> {
    throw new Error('tenant reads run without a transaction');
  }

  async destroy(): Promise<void> {
    await this.reads.pool.end();
  }
}

/**
 * A pooled client that reads as the current `readAsTenant`'s tenant. No read here takes an abort
 * signal or streams, so Kysely's optional `cancelQuery`/`killSession` are not offered and
 * `streamQuery` refuses, as Kysely's own driver did without a cursor class.
 */
class TenantReadConnection implements DatabaseConnection {
  constructor(
    private readonly reads: TenantReadPool,
    readonly client: pg.PoolClient,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return { rows: (await this.reads.query(this.client, query.sql, query.parameters)) as R[] };
  }

  // eslint-disable-next-line require-yield -- refuses before yielding anything
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('tenant reads do not stream');
  }
}

function tenantOfThisRead(): string {
  const tenantId = readingTenant.getStore();
  if (tenantId === undefined) throw new Error('a query on the tenant read pool outside readAsTenant');
  return tenantId;
}
