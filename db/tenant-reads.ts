import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, sql, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from 'kysely';
import type { Db } from './database.js';
import { TENANT_ROLE, withTenant, type TenantScoped } from './tenant-transaction.js';
import { withWrappedDriver } from './wrapped-driver.js';

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
 * PGlite has one connection and no pool: there a read is `withTenant`'s transaction, made read-only.
 */

/** Kysely's options of a connection call (an abort signal); not exported by name. */
type CallOptions = Parameters<Driver['acquireConnection']>[0];

/** The read pool of each open Postgres database (db/database.ts attaches it). */
const readPools = new WeakMap<Db, Db>();

/** The tenant the current `readAsTenant` reads as. */
const readingTenant = new AsyncLocalStorage<string>();

export function attachTenantReadPool(db: Db, readPool: Db): void {
  readPools.set(db, readPool);
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

/** A dialect whose connections read as the tenant of the `readAsTenant` they serve (see the header). */
export function readingAsTenant(dialect: Dialect): Dialect {
  return withWrappedDriver(dialect, (driver) => new TenantReadDriver(driver));
}

class TenantReadDriver implements Driver {
  /** One wrapper per pooled connection, so that what it was set to outlives one checkout. */
  private readonly connections = new WeakMap<DatabaseConnection, TenantReadConnection>();

  constructor(private readonly driver: Driver) {}

  async acquireConnection(options?: CallOptions): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection(options);
    let reading = this.connections.get(connection);
    if (!reading) {
      reading = new TenantReadConnection(connection);
      this.connections.set(connection, reading);
    }
    return reading;
  }

  async releaseConnection(connection: DatabaseConnection, options?: CallOptions): Promise<void> {
    await this.driver.releaseConnection((connection as TenantReadConnection).connection, options);
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

  init: Driver['init'] = (options) => this.driver.init(options);
  destroy: Driver['destroy'] = (options) => this.driver.destroy(options);
}

/**
 * A pooled connection that reads as the current `readAsTenant`'s tenant. Kysely's optional
 * `cancelQuery`/`killSession` are not passed on: no read here takes an abort signal.
 */
class TenantReadConnection implements DatabaseConnection {
  /** The tenant this session reads as; unset until a setting statement has succeeded. */
  private tenantId: string | undefined;

  constructor(readonly connection: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery, options?: CallOptions): Promise<QueryResult<R>> {
    await this.readAs(tenantOfThisRead());
    return this.connection.executeQuery<R>(query, options);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number, options?: CallOptions): AsyncIterableIterator<QueryResult<R>> {
    await this.readAs(tenantOfThisRead());
    yield* this.connection.streamQuery<R>(query, chunkSize, options);
  }

  private async readAs(tenantId: string): Promise<void> {
    if (this.tenantId === tenantId) return;
    this.tenantId = undefined;
    // Role and read-only are the same every time; setting them with the tenant keeps it one statement.
    await this.connection.executeQuery(
      CompiledQuery.raw(
        `select set_config('role', $1, false), set_config('default_transaction_read_only', 'on', false), set_config('app.tenant_id', $2, false)`,
        [TENANT_ROLE, tenantId],
      ),
    );
    this.tenantId = tenantId;
  }
}

function tenantOfThisRead(): string {
  const tenantId = readingTenant.getStore();
  if (tenantId === undefined) throw new Error('a query on the tenant read pool outside readAsTenant');
  return tenantId;
}
