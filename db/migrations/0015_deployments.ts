import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createAgentTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Deployments: an agent published under a public `slug` (its hosted chat page) with a publishable key
 * (docs/deployments.md). Slugs and keys are unique across the service: both are looked up before any
 * workspace is known. A run the key starts names its deployment, so the key reaches only its own runs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createAgentTable(db, 'deployments')
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text')
    .addColumn('version', 'integer')
    .addColumn('allowed_origins', 'jsonb', notNull)
    .addColumn('runs_per_minute', 'integer', notNull)
    .addColumn('runs_per_minute_per_visitor', 'integer', notNull)
    .addColumn('publishable_key', 'text', (c) => c.notNull().unique())
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('deployments_tenant_idx').on('deployments').columns(['tenant_id', 'id']).execute();
  // A CORS preflight carries no credential: it asks whether any deployment lists its origin (`@>`).
  await sql`create index deployments_allowed_origins_idx on deployments using gin (allowed_origins jsonb_path_ops)`.execute(db);

  // A thread a publishable key started, with its visitor's token (hashed): the key is public, so the
  // token, not the thread's or run's id, is what lets a visitor read, answer and continue it.
  await db.schema
    .createTable('deployment_threads')
    .addColumn('thread_id', 'text', (c) => c.primaryKey().references('threads.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('deployment_id', 'text', ownedBy('deployments'))
    .addColumn('visitor_token_hash', 'text', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .execute();

  // No foreign key: a deleted deployment leaves its runs readable.
  await db.schema.alterTable('runs').addColumn('deployment_id', 'text').execute();
  await db.schema.createIndex('runs_deployment_idx').on('runs').columns(['deployment_id', 'thread_id']).where(sql.ref('deployment_id'), 'is not', null).execute();

  await enableTenantIsolation(db, 'deployments', 'deployment_threads');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_deployment_idx').execute();
  await db.schema.alterTable('runs').dropColumn('deployment_id').execute();
  await dropTables(db, 'deployment_threads', 'deployments');
}
