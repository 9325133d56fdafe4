import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull } from './columns.js';
import { createTenantTable, dropTables } from './tables.js';
import { TENANT_ROLE } from '../tenant-transaction.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Members and invites (docs/members.md). A membership gains an id (the `{id}` of /v1/members) and a
 * role; each workspace's earliest member becomes its owner, everyone else a plain member. Invites
 * are single-use links whose token is stored hashed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('memberships')
    .addColumn('id', 'text')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('member').check(sql`role in ('owner', 'admin', 'member')`))
    .execute();
  // Existing rows get ids of the same shape as newId('mem'): 26 Crockford base32 characters.
  await sql`update memberships set id = 'mem_' || upper(substr(md5(random()::text || user_id || tenant_id), 1, 26))`.execute(db);
  await sql`
    update memberships set role = 'owner'
    where (tenant_id, user_id) in (
      select distinct on (tenant_id) tenant_id, user_id from memberships order by tenant_id, created_at, user_id
    )`.execute(db);
  await db.schema.alterTable('memberships').alterColumn('id', (c) => c.setNotNull()).execute();
  await db.schema.alterTable('memberships').alterColumn('role', (c) => c.dropDefault()).execute();
  await db.schema.alterTable('memberships').addUniqueConstraint('memberships_id_key', ['id']).execute();

  await createTenantTable(db, 'invites')
    // Lower-cased, like users.email.
    .addColumn('email', 'text', notNull)
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('expires_at', 'timestamptz', notNull)
    .addColumn('accepted_at', 'timestamptz')
    // Who used the link; null while unused (and when that account is later deleted).
    .addColumn('accepted_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('invites_tenant_idx').on('invites').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('invites_tenant_email_idx').on('invites').columns(['tenant_id', 'email']).execute();

  await enableTenantIsolation(db, 'invites');

  // A workspace lists its members' addresses: it may read the id and e-mail of its own members' users,
  // and no one else's (users span workspaces; the connecting role, which owns the table, is unaffected).
  await sql.raw('alter table users enable row level security').execute(db);
  await sql.raw(`
    create policy users_workspace_members on users for select
      using (exists (select 1 from memberships m where m.user_id = users.id and m.tenant_id = current_setting('app.tenant_id', true)))`).execute(db);
  await sql.raw(`grant select (id, email) on users to ${TENANT_ROLE}`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`revoke select (id, email) on users from ${TENANT_ROLE}`).execute(db);
  await sql.raw('drop policy users_workspace_members on users').execute(db);
  await sql.raw('alter table users disable row level security').execute(db);
  await dropTables(db, 'invites');
  await db.schema.alterTable('memberships').dropConstraint('memberships_id_key').execute();
  await db.schema.alterTable('memberships').dropColumn('id').dropColumn('role').execute();
}

