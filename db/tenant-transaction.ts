import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, sql, type DatabaseConnection, type Dialect, type Driver, type Kysely, type TransactionSettings, type Transaction } from 'kysely';
import pg from 'pg';
import type { Db } from './database.js';
import type { Database } from './schema.js';
import { withWrappedDriver } from './wrapped-driver.js';

/** The database role tenant-scoped transactions switch to. It has no BYPASSRLS and owns no table. */
export const TENANT_ROLE = 'agent_platform_tenant';

declare const tenantScoped: unique symbol;

/**
 * A transaction that sees one tenant's rows only. Only `withTenant` makes one: the brand keeps a plain
 * transaction (which runs as the owner role, past row-level security) from being passed where a
 * tenant-scoped one is meant.
 */
export type TenantTx = Transaction<Database> & { readonly [tenantScoped]: true };

/**
 * What reads one tenant's rows: a `TenantTx`, or `readAsTenant`'s reader (db/tenant-reads.ts). A
 * repository function that only reads takes this, so that both may call it.
 */
export type TenantScoped = Kysely<Database> & { readonly [tenantScoped]: true };

/** The tenant `withTenant` is starting a transaction for, until a driver (or withTenant itself) has set it. */
interface TenantStart {
  tenantId: string;
  applied: boolean;
}
const tenantStart = new AsyncLocalStorage<TenantStart>();

/**
 * Runs `work` in a transaction that can see only `tenantId`'s rows.
 *
 * The transaction switches to the tenant role (no BYPASSRLS) and sets `app.tenant_id`, which the
 * row-level security policies compare against. Queries still filter by tenant themselves; this is the
 * second wall for the one that forgets.
 *
 * Round trips are what a plain request costs (docs/performance.md: a `GET /v1/agents` made six, the query
 * one of them), so both settings are one statement (`set_config('role', …, true)` is `set local role`),
 * and over node-postgres `begin` carries it (`startingTenantTransactions`). It is Kysely's own
 * transaction all the same, with its commit, rollback and guards.
 */
export async function withTenant<T>(db: Db, tenantId: string, work: (tx: TenantTx) => Promise<T>): Promise<T> {
  const start: TenantStart = { tenantId, applied: false };
  return tenantStart.run(start, () =>
    db.transaction().execute(async (tx) => {
      const startedByDriver = start.applied;
      if (!startedByDriver) await sql`select set_config('role', ${TENANT_ROLE}, true), set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
      // A transaction the work starts itself is not this tenant's.
      const result = await tenantStart.exit(() => work(tx as TenantTx));
      // Kysely's node-postgres commit fails a transaction a statement aborted (the work may have caught the
      // error); its PGlite commit does not notice: one more statement does, and costs no round trip there.
      if (!startedByDriver) await sql`select 1`.execute(tx);
      return result;
    }),
  );
}

/**
 * A node-postgres dialect whose `begin` for `withTenant` also sets the tenant: one simple-protocol message
 * of two statements, hence the tenant id as an escaped literal (that protocol takes no parameters). Every
 * other transaction begins as Kysely begins it.
 */
export function startingTenantTransactions(dialect: Dialect): Dialect {
  return withWrappedDriver(dialect, (driver) => new TenantStartingDriver(driver));
}

class TenantStartingDriver implements Driver {
  constructor(private readonly driver: Driver) {}

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const start = tenantStart.getStore();
    if (!start || start.applied || settings.accessMode || settings.isolationLevel) return this.driver.beginTransaction(connection, settings);
    try {
      await connection.executeQuery(
        CompiledQuery.raw(`begin; select set_config('role', '${TENANT_ROLE}', true), set_config('app.tenant_id', ${pg.escapeLiteral(start.tenantId)}, true)`),
      );
    } catch (err) {
      // `begin` may have run before the settings failed (a cancel, a timeout, a role not granted). Kysely
      // rolls back only a transaction whose begin succeeded, so the connection would go back to the pool
      // in an aborted transaction and fail every later use. Outside a transaction a rollback only warns;
      // one that fails has the driver discard the connection.
      await this.driver.rollbackTransaction(connection).catch(() => {});
      throw err;
    }
    start.applied = true;
  }

  init: Driver['init'] = (options) => this.driver.init(options);
  acquireConnection: Driver['acquireConnection'] = (options) => this.driver.acquireConnection(options);
  commitTransaction: Driver['commitTransaction'] = (connection) => this.driver.commitTransaction(connection);
  rollbackTransaction: Driver['rollbackTransaction'] = (connection) => this.driver.rollbackTransaction(connection);
  savepoint: Driver['savepoint'] = (connection, name, compile) => this.driver.savepoint!(connection, name, compile);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (connection, name, compile) => this.driver.rollbackToSavepoint!(connection, name, compile);
  releaseSavepoint: Driver['releaseSavepoint'] = (connection, name, compile) => this.driver.releaseSavepoint!(connection, name, compile);
  releaseConnection: Driver['releaseConnection'] = (connection, options) => this.driver.releaseConnection(connection, options);
  destroy: Driver['destroy'] = (options) => this.driver.destroy(options);
}
