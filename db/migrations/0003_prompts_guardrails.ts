import { sql, type Kysely } from 'kysely';
import { enableTenantIsolation } from './0001_foundation.js';

/**
 * Prompt templates with every version kept, guardrails, and what a run records of both: the prompt
 * versions its nodes used and the guardrails that tripped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable('prompts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('prompts_tenant_name_key', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('prompt_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('prompt_id', 'text', (c) => c.notNull().references('prompts.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('model', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('prompt_versions_prompt_version_key', ['prompt_id', 'version'])
    .execute();

  await db.schema
    .createTable('guardrails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull().check(sql`target in ('input', 'output', 'both')`))
    .addColumn('action', 'text', (c) => c.notNull().check(sql`action in ('block', 'redact', 'warn')`))
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('config', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('guardrails_tenant_name_key', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .alterTable('runs')
    .addColumn('prompts', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('guardrail_trips', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();

  for (const table of ['prompts', 'prompt_versions', 'guardrails']) await enableTenantIsolation(db, table);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('prompts').dropColumn('guardrail_trips').execute();
  for (const table of ['guardrails', 'prompt_versions', 'prompts']) await db.schema.dropTable(table).ifExists().execute();
}
