import { sql, type Kysely } from 'kysely';
import { TENANT_ROLE } from '../tenant-transaction.js';

/**
 * Tenants, API keys, agents and agent versions, with row-level security on every tenant table.
 *
 * Tenant-scoped queries run as TENANT_ROLE, a role without BYPASSRLS that owns nothing, inside a
 * transaction that sets `app.tenant_id`; the policies below then hide every other tenant's rows even
 * from a query that forgot its `where tenant_id = ...`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists vector`.execute(db);
  await sql.raw(`
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = '${TENANT_ROLE}') then
        create role ${TENANT_ROLE} nologin nobypassrls;
      end if;
    end $$`).execute(db);
  await sql.raw(`grant ${TENANT_ROLE} to current_user`).execute(db);

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('management', 'standard')`))
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_tenant_idx').on('api_keys').column('tenant_id').execute();

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('agents_tenant_name_key', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('agent_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('published', 'draft', 'archived')`))
    .addColumn('graph', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('agent_versions_agent_version_key', ['agent_id', 'version'])
    .execute();
  // At most one published version per agent, enforced by the database rather than by hope.
  await sql`create unique index agent_versions_one_published on agent_versions (agent_id) where status = 'published'`.execute(db);

  for (const table of ['api_keys', 'agents', 'agent_versions']) {
    await enableTenantIsolation(db, table);
  }
  await sql.raw(`grant select on tenants to ${TENANT_ROLE}`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['agent_versions', 'agents', 'api_keys', 'tenants']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

/** Row-level security for one tenant table: TENANT_ROLE sees and writes only the current tenant's rows. */
export async function enableTenantIsolation(db: Kysely<unknown>, table: string): Promise<void> {
  // One statement per call: PGlite's extended protocol takes a single command at a time.
  await sql.raw(`alter table ${table} enable row level security`).execute(db);
  await sql.raw(`
    create policy ${table}_tenant_isolation on ${table}
      using (tenant_id = current_setting('app.tenant_id', true))
      with check (tenant_id = current_setting('app.tenant_id', true))`).execute(db);
  await sql.raw(`grant select, insert, update, delete on ${table} to ${TENANT_ROLE}`).execute(db);
}
