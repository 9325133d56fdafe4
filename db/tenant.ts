import { sql, type Transaction } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';
import { TENANT_ROLE } from './tenant-role.js';

export type TenantTx = Transaction<Database>;

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
    return work(tx);
  });
}
