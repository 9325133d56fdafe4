import { sql, type Kysely } from 'kysely';
import { TENANT_ROLE } from '../tenant-transaction.js';
import { defaultNow, notNull, timestamps } from './columns.js';
import { createAgentTable, createNamedTenantTable, createTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

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
    .addColumn('name', 'text', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .execute();

  await createTenantTable(db, 'api_keys')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('management', 'standard')`))
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_tenant_idx').on('api_keys').column('tenant_id').execute();

  await createNamedTenantTable(db, 'agents')
    .addColumn('description', 'text')
    .$call(timestamps)
    .execute();

  await createAgentTable(db, 'agent_versions')
    .addColumn('version', 'integer', notNull)
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('published', 'draft', 'archived')`))
    .addColumn('graph', 'jsonb', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addUniqueConstraint('agent_versions_agent_version_key', ['agent_id', 'version'])
    .execute();
  // At most one published version per agent, enforced by the database rather than by hope.
  await sql`create unique index agent_versions_one_published on agent_versions (agent_id) where status = 'published'`.execute(db);

  await enableTenantIsolation(db, 'api_keys', 'agents', 'agent_versions');
  await sql.raw(`grant select on tenants to ${TENANT_ROLE}`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'agent_versions', 'agents', 'api_keys', 'tenants');
}
