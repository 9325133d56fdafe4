import { sql, type Kysely } from 'kysely';
import { notNull, timestamps } from './columns.js';
import { createNamedTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Saved sign-ins for the browser tool (docs/browser.md): a Playwright storage state, sealed (JWE,
 * activities/secrets/secret-box.ts), with what may be shown of it in the clear. Tools gain the kind
 * `browser`, whose settings name a sign-in by id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createNamedTenantTable(db, 'browser_sign_ins')
    .addColumn('origin', 'text', notNull)
    .addColumn('storage_state', 'text', notNull)
    .addColumn('cookie_count', 'integer', notNull)
    .addColumn('cookie_domains', 'jsonb', notNull)
    .addColumn('local_storage_count', 'integer', notNull)
    .addColumn('cookies_expire_at', 'timestamptz')
    .$call(timestamps)
    .execute();
  await enableTenantIsolation(db, 'browser_sign_ins');

  await sql`alter table tools drop constraint tools_kind_check`.execute(db);
  await sql`alter table tools add constraint tools_kind_check check (kind in ('builtin', 'http', 'mcp', 'agent', 'browser'))`.execute(db);
  await db.schema.alterTable('tools').addColumn('browser', 'jsonb').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tools').dropColumn('browser').execute();
  // Browser tools cannot exist without this migration.
  await sql`delete from tools where kind = 'browser'`.execute(db);
  await sql`alter table tools drop constraint tools_kind_check`.execute(db);
  await sql`alter table tools add constraint tools_kind_check check (kind in ('builtin', 'http', 'mcp', 'agent'))`.execute(db);
  await dropTables(db, 'browser_sign_ins');
}
