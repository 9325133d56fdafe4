import { sql, type Transaction } from 'kysely';
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

/**
 * Runs `work` in a transaction that can see only `tenantId`'s rows.
 *
 * The transaction switches to the tenant role (no BYPASSRLS) and sets `app.tenant_id`, which the
 * row-level security policies compare against. Queries still filter by tenant themselves; this is the
 * second wall for the one that forgets.
 */
export async function withTenant<T>(db: Db, tenantId: string, work: (tx: TenantTx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql.raw(`set local role ${TENANT_ROLE}`).execute(tx);
    await sql`select set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
    return work(tx as TenantTx);
  });
}
