import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, timestamps } from './columns.js';
import { createChildTable, createNamedTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Skills with every version kept (docs/skills.md), and what a run records of them: the skill versions
 * its nodes loaded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createNamedTenantTable(db, 'skills')
    .addColumn('version', 'integer', notNull)
    .$call(timestamps)
    .execute();

  await createChildTable(db, 'skill_versions', 'skill_id', 'skills')
    .addColumn('version', 'integer', notNull)
    .addColumn('description', 'text', notNull)
    .addColumn('instructions', 'text', notNull)
    // Tool ids of the catalog; a deleted tool stays named here, and a run of the version refuses it.
    .addColumn('tools', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addUniqueConstraint('skill_versions_skill_version_key', ['skill_id', 'version'])
    .execute();

  await db.schema
    .alterTable('runs')
    .addColumn('skills', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();

  await enableTenantIsolation(db, 'skills', 'skill_versions');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('skills').execute();
  await dropTables(db, 'skill_versions', 'skills');
}
