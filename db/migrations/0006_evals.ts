import { sql, type Kysely } from 'kysely';
import { enableTenantIsolation } from './0001_foundation.js';

/**
 * Evals: suites of cases per agent, experiments, the cells an experiment runs (case × variant × repeat)
 * with their results, and each experiment's event log. A cell copies its case's input, expected value and
 * scorers when the experiment is created, so deleting a suite leaves finished experiments readable; the
 * runs an experiment makes point back at it and at their cell.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable('eval_suites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('scorers', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('eval_suites_agent_name_key', ['tenant_id', 'agent_id', 'name'])
    .execute();
  await db.schema.createIndex('eval_suites_tenant_name_idx').on('eval_suites').columns(['tenant_id', 'name']).execute();

  await db.schema
    .createTable('eval_cases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('suite_id', 'text', (c) => c.notNull().references('eval_suites.id').onDelete('cascade'))
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('expected', 'jsonb')
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('tags', 'jsonb', (c) => c.notNull())
    .addColumn('scorers', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('eval_cases_suite_idx').on('eval_cases').columns(['suite_id', 'id']).execute();

  await db.schema
    .createTable('experiments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    // No foreign key: a deleted suite leaves its experiments' results readable.
    .addColumn('suite_id', 'text', (c) => c.notNull())
    .addColumn('suite_name', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('variants', 'jsonb', (c) => c.notNull())
    .addColumn('repeats', 'integer', (c) => c.notNull())
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('primary_scorer', 'text')
    .addColumn('baseline_experiment_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'completed', 'cancelled', 'failed')`))
    .addColumn('error', 'jsonb')
    .addColumn('case_count', 'integer', (c) => c.notNull())
    .addColumn('cell_count', 'integer', (c) => c.notNull())
    .addColumn('last_event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('experiments_tenant_idx').on('experiments').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('experiment_cells')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id').onDelete('cascade'))
    // The cell's place in the experiment: cells are started in this order.
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('case_id', 'text', (c) => c.notNull())
    .addColumn('case_index', 'integer', (c) => c.notNull())
    .addColumn('variant_index', 'integer', (c) => c.notNull())
    .addColumn('repeat', 'integer', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('expected', 'jsonb')
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('scorers', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'running', 'completed', 'failed', 'skipped')`))
    .addColumn('run_id', 'text')
    .addColumn('output', 'text')
    .addColumn('scores', 'jsonb')
    .addColumn('passed', 'boolean')
    .addColumn('latency_ms', 'integer')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    // numeric, not text as on runs: the leaderboard sums it in SQL, exactly.
    .addColumn('cost_usd', 'numeric')
    .addColumn('error', 'jsonb')
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .addUniqueConstraint('experiment_cells_experiment_seq_key', ['experiment_id', 'seq'])
    .execute();
  await db.schema.createIndex('experiment_cells_status_idx').on('experiment_cells').columns(['experiment_id', 'status', 'seq']).execute();

  await db.schema
    .createTable('experiment_events')
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('dedupe_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('experiment_events_pkey', ['experiment_id', 'seq'])
    .execute();
  await sql`create unique index experiment_events_dedupe on experiment_events (experiment_id, dedupe_key) where dedupe_key is not null`.execute(db);

  await db.schema
    .alterTable('runs')
    .addColumn('experiment_id', 'text')
    .addColumn('cell_id', 'text')
    // A variant's graph (its model, prompt or temperature applied to the version's, or a whole graph).
    .addColumn('graph_override', 'jsonb')
    .execute();

  // An eval run's thread is the eval's, not a conversation: thread lists leave it out.
  await db.schema.alterTable('threads').addColumn('source', 'text', (c) => c.notNull().defaultTo('api')).execute();

  for (const table of ['eval_suites', 'eval_cases', 'experiments', 'experiment_cells', 'experiment_events']) await enableTenantIsolation(db, table);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').dropColumn('source').execute();
  await db.schema.alterTable('runs').dropColumn('experiment_id').dropColumn('cell_id').dropColumn('graph_override').execute();
  for (const table of ['experiment_events', 'experiment_cells', 'experiments', 'eval_cases', 'eval_suites']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
