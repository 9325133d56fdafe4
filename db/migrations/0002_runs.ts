import { sql, type Kysely } from 'kysely';
import { TENANT_ROLE } from '../tenant-transaction.js';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createAgentTable, createChildTable, createEventLogTable, createNamedTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * The tool catalog, threads, runs with their event log and steps, mirrored Temporal histories, and the
 * per-key request log the run rate limit counts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createNamedTenantTable(db, 'tools')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('builtin', 'http', 'mcp')`))
    .addColumn('description', 'text')
    .addColumn('builtin', 'text')
    .addColumn('http', 'jsonb')
    .addColumn('mcp', 'jsonb')
    .$call(timestamps)
    .execute();

  await createAgentTable(db, 'threads')
    .addColumn('title', 'text', notNull)
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('threads_agent_idx').on('threads').columns(['agent_id', 'updated_at']).execute();

  await createAgentTable(db, 'runs')
    .addColumn('agent_version_id', 'text', ownedBy('agent_versions'))
    .addColumn('version', 'integer', notNull)
    .addColumn('thread_id', 'text', ownedBy('threads'))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled')`),
    )
    .addColumn('source', 'text', notNull)
    .addColumn('model', 'text')
    .addColumn('input', 'text', notNull)
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
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('runs_tenant_idx').on('runs').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('runs_agent_idx').on('runs').columns(['agent_id', 'id']).execute();
  await db.schema.createIndex('runs_thread_idx').on('runs').columns(['thread_id', 'id']).execute();

  await createEventLogTable(db, 'run_events', 'run_id', 'runs');

  await createChildTable(db, 'run_steps', 'run_id', 'runs')
    .addColumn('index', 'integer', notNull)
    .addColumn('node_id', 'text', notNull)
    .addColumn('tool_call_id', 'text', notNull)
    .addColumn('tool', 'text', notNull)
    .addColumn('tool_id', 'text')
    .addColumn('arguments', 'jsonb', notNull)
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('running', 'completed', 'failed')`))
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', defaultNow)
    .addColumn('ended_at', 'timestamptz')
    .addColumn('duration_ms', 'integer')
    .addUniqueConstraint('run_steps_run_index_key', ['run_id', 'index'])
    .execute();

  await db.schema
    .createTable('run_histories')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('history', 'jsonb', notNull)
    .addColumn('event_count', 'integer', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .execute();

  await db.schema
    .createTable('rate_limit_hits')
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('key_id', 'text', notNull)
    .addColumn('bucket', 'text', notNull)
    .addColumn('at', 'timestamptz', defaultNow)
    .execute();
  await db.schema.createIndex('rate_limit_hits_key_idx').on('rate_limit_hits').columns(['key_id', 'bucket', 'at']).execute();

  await enableTenantIsolation(db, 'tools', 'threads', 'runs', 'run_events', 'run_steps', 'run_histories', 'rate_limit_hits');
  await sql.raw(`grant usage on schema public to ${TENANT_ROLE}`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'rate_limit_hits', 'run_histories', 'run_steps', 'run_events', 'runs', 'threads', 'tools');
}
