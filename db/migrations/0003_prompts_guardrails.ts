import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, timestamps } from './columns.js';
import { createChildTable, createNamedTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Prompt templates with every version kept, guardrails, and what a run records of both: the prompt
 * versions its nodes used and the guardrails that tripped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createNamedTenantTable(db, 'prompts')
    .addColumn('version', 'integer', notNull)
    .$call(timestamps)
    .execute();

  await createChildTable(db, 'prompt_versions', 'prompt_id', 'prompts')
    .addColumn('version', 'integer', notNull)
    .addColumn('template', 'text', notNull)
    .addColumn('description', 'text')
    .addColumn('model', 'text')
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addUniqueConstraint('prompt_versions_prompt_version_key', ['prompt_id', 'version'])
    .execute();

  await createNamedTenantTable(db, 'guardrails')
    .addColumn('kind', 'text', notNull)
    .addColumn('target', 'text', (c) => c.notNull().check(sql`target in ('input', 'output', 'both')`))
    .addColumn('action', 'text', (c) => c.notNull().check(sql`action in ('block', 'redact', 'warn')`))
    .addColumn('enabled', 'boolean', notNull)
    .addColumn('description', 'text')
    .addColumn('config', 'jsonb', notNull)
    .$call(timestamps)
    .execute();

  await db.schema
    .alterTable('runs')
    .addColumn('prompts', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('guardrail_trips', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();

  await enableTenantIsolation(db, 'prompts', 'prompt_versions', 'guardrails');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('prompts').dropColumn('guardrail_trips').execute();
  await dropTables(db, 'guardrails', 'prompt_versions', 'prompts');
}
