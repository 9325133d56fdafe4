import { sql, type Kysely } from 'kysely';
import { TENANT_ROLE } from '../tenant-transaction.js';

/**
 * Row-level security for tenant tables: TENANT_ROLE sees and writes only the rows of the tenant in
 * `app.tenant_id` (see 0001_foundation for why).
 */
export async function enableTenantIsolation(db: Kysely<unknown>, ...tables: string[]): Promise<void> {
  for (const table of tables) {
    // One statement per call: PGlite's extended protocol takes a single command at a time.
    await sql.raw(`alter table ${table} enable row level security`).execute(db);
    await sql.raw(`
      create policy ${table}_tenant_isolation on ${table}
        using (tenant_id = current_setting('app.tenant_id', true))
        with check (tenant_id = current_setting('app.tenant_id', true))`).execute(db);
    await sql.raw(`grant select, insert, update, delete on ${table} to ${TENANT_ROLE}`).execute(db);
  }
}
