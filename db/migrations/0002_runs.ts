import { sql, type Kysely } from 'kysely';
import { TENANT_ROLE } from '../tenant-transaction.js';
import { enableTenantIsolation } from './0001_foundation.js';

/**
 * The tool catalog, threads, runs with their event log and steps, mirrored Temporal histories, and the
 * per-key request log the run rate limit counts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable('tools')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('builtin', 'http', 'mcp')`))
    .addColumn('description', 'text')
    .addColumn('builtin', 'text')
    .addColumn('http', 'jsonb')
    .addColumn('mcp', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('tools_tenant_name_key', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('threads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('threads_agent_idx').on('threads').columns(['agent_id', 'updated_at']).execute();

  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('agent_version_id', 'text', (c) => c.notNull().references('agent_versions.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled')`),
    )
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('output', 'text')
    .addColumn('error', 'jsonb')
    .addColumn('pending_question', 'jsonb')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('cost_usd', 'text')
    .addColumn('duration_ms', 'integer')
    // The last event sequence number handed out; appends lock the run row to take the next ones.
    .addColumn('last_event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('runs_tenant_idx').on('runs').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('runs_agent_idx').on('runs').columns(['agent_id', 'id']).execute();
  await db.schema.createIndex('runs_thread_idx').on('runs').columns(['thread_id', 'id']).execute();

  await db.schema
    .createTable('run_events')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    // Set for events that must appear once even when the activity appending them is retried.
    .addColumn('dedupe_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('run_events_pkey', ['run_id', 'seq'])
    .execute();
  await sql`create unique index run_events_dedupe on run_events (run_id, dedupe_key) where dedupe_key is not null`.execute(db);

  await db.schema
    .createTable('run_steps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('index', 'integer', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('tool_id', 'text')
    .addColumn('arguments', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('running', 'completed', 'failed')`))
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('ended_at', 'timestamptz')
    .addColumn('duration_ms', 'integer')
    .addUniqueConstraint('run_steps_run_index_key', ['run_id', 'index'])
    .execute();

  await db.schema
    .createTable('run_histories')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('history', 'jsonb', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('rate_limit_hits')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('rate_limit_hits_key_idx').on('rate_limit_hits').columns(['key_id', 'bucket', 'at']).execute();

  for (const table of ['tools', 'threads', 'runs', 'run_events', 'run_steps', 'run_histories', 'rate_limit_hits']) {
    await enableTenantIsolation(db, table);
  }
  await sql.raw(`grant usage on schema public to ${TENANT_ROLE}`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['rate_limit_hits', 'run_histories', 'run_steps', 'run_events', 'runs', 'threads', 'tools']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
