import { CompiledQuery, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/** The database role tenant-scoped transactions switch to. It has no BYPASSRLS and owns no table. */
export const TENANT_ROLE = 'agent_platform_tenant';

declare const tenantScoped: unique symbol;

/**
 * A transaction that sees one tenant's rows only. Only `withTenant` makes one: the brand keeps a plain
 * transaction (which runs as the owner role, past row-level security) from being passed where a
 * tenant-scoped one is meant.
 */
export type TenantTx = Transaction<Database> & { readonly [tenantScoped]: true };

/** Databases reached over node-postgres, which can start a tenant transaction in one round trip (below). */
const overNodePostgres = new WeakSet<Db>();

/** Called by openDatabase for a Postgres pool: `begin` and the tenant settings then go as one message. */
export function startTenantTransactionsInOneTrip(db: Db): void {
  overNodePostgres.add(db);
}

/**
 * Runs `work` in a transaction that can see only `tenantId`'s rows.
 *
 * The transaction switches to the tenant role (no BYPASSRLS) and sets `app.tenant_id`, which the
 * row-level security policies compare against. Queries still filter by tenant themselves; this is the
 * second wall for the one that forgets.
 *
 * Round trips are what a plain request costs (docs/performance.md: a `GET /v1/agents` made six, the
 * query one of them), so the start takes one: `set_config('role', …, true)` is `set local role`, and on
 * Postgres `begin` travels with it as one simple-protocol message (two statements, hence the tenant id
 * as an escaped literal: that protocol takes no parameters). PGlite (in-process, no round trip to save,
 * and its driver runs transactions its own way) keeps Kysely's own transaction.
 */
export async function withTenant<T>(db: Db, tenantId: string, work: (tx: TenantTx) => Promise<T>): Promise<T> {
  if (!overNodePostgres.has(db)) {
    return db.transaction().execute(async (tx) => {
      await sql`select set_config('role', ${TENANT_ROLE}, true), set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
      return work(tx as TenantTx);
    });
  }
  return db.connection().execute(async (connection) => {
    // What Kysely's transaction().execute() does around its callback: commit, or roll back and rethrow
    // (a failed start too: `begin` may have run). The handle is pinned to this one connection, which is
    // all a Transaction is.
    try {
      await connection.executeQuery(
        CompiledQuery.raw(`begin; select set_config('role', '${TENANT_ROLE}', true), set_config('app.tenant_id', ${pg.escapeLiteral(tenantId)}, true)`),
      );
      const result = await work(connection as unknown as TenantTx);
      await connection.executeQuery(CompiledQuery.raw('commit'));
      return result;
    } catch (err) {
      await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
      throw err;
    }
  });
}
