import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy } from './columns.js';

/** A table of one workspace's records: `id`, then `tenant_id`, deleted with the workspace. */
export function createTenantTable(db: Kysely<unknown>, name: string) {
  return db.schema.createTable(name).addColumn('id', 'text', (c) => c.primaryKey()).addColumn('tenant_id', 'text', ownedBy('tenants'));
}

/** A tenant table whose records are also addressed by a `name`, unique in the workspace. */
export function createNamedTenantTable(db: Kysely<unknown>, name: string) {
  return createTenantTable(db, name).addColumn('name', 'text', notNull).addUniqueConstraint(`${name}_tenant_name_key`, ['tenant_id', 'name']);
}

/** A tenant table whose records belong to one of the workspace's agents (`agent_id`) and go with it. */
export function createAgentTable(db: Kysely<unknown>, name: string) {
  return createTenantTable(db, name).addColumn('agent_id', 'text', ownedBy('agents'));
}

/**
 * A table of records that belong to a parent record and go with it: `id`, `tenant_id` (the parent's,
 * copied so row-level security needs no join, hence no foreign key of its own), then the parent's id.
 */
export function createChildTable<P extends string>(db: Kysely<unknown>, name: string, parentColumn: P, parentTable: string) {
  return db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', notNull)
    .addColumn(parentColumn, 'text', ownedBy(parentTable));
}

/**
 * The append-only event log of a run or an experiment: events numbered per parent by `seq` (the parent
 * row's `last_event_seq` hands the numbers out), streamed to clients as Server-Sent Events.
 */
export async function createEventLogTable(db: Kysely<unknown>, name: string, parentColumn: string, parentTable: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn(parentColumn, 'text', ownedBy(parentTable))
    .addColumn('seq', 'integer', notNull)
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('type', 'text', notNull)
    .addColumn('data', 'jsonb', notNull)
    // Set for events that must appear once even when the activity appending them is retried.
    .addColumn('dedupe_key', 'text')
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addPrimaryKeyConstraint(`${name}_pkey`, [parentColumn, 'seq'])
    .execute();
  await sql.raw(`create unique index ${name}_dedupe on ${name} (${parentColumn}, dedupe_key) where dedupe_key is not null`).execute(db);
}

/** Drops each table that exists, in the order given (dependents first). */
export async function dropTables(db: Kysely<unknown>, ...tables: string[]): Promise<void> {
  for (const table of tables) await db.schema.dropTable(table).ifExists().execute();
}
