import { sql, type Kysely } from 'kysely';
import { notNull, timestamps } from './columns.js';
import { createAgentTable, createChildTable, createEventLogTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Evals: suites of cases per agent, experiments, the cells an experiment runs (case × variant × repeat)
 * with their results, and each experiment's event log. A cell copies its case's input, expected value and
 * scorers when the experiment is created, so deleting a suite leaves finished experiments readable; the
 * runs an experiment makes point back at it and at their cell.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createAgentTable(db, 'eval_suites')
    .addColumn('name', 'text', notNull)
    .addColumn('description', 'text')
    .addColumn('scorers', 'jsonb', notNull)
    .$call(timestamps)
    .addUniqueConstraint('eval_suites_agent_name_key', ['tenant_id', 'agent_id', 'name'])
    .execute();
  await db.schema.createIndex('eval_suites_tenant_name_idx').on('eval_suites').columns(['tenant_id', 'name']).execute();

  await createChildTable(db, 'eval_cases', 'suite_id', 'eval_suites')
    .addColumn('input', 'text', notNull)
    .addColumn('expected', 'jsonb')
    .addColumn('metadata', 'jsonb', notNull)
    .addColumn('tags', 'jsonb', notNull)
    .addColumn('scorers', 'jsonb')
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('eval_cases_suite_idx').on('eval_cases').columns(['suite_id', 'id']).execute();

  await createAgentTable(db, 'experiments')
    // No foreign key: a deleted suite leaves its experiments' results readable.
    .addColumn('suite_id', 'text', notNull)
    .addColumn('suite_name', 'text', notNull)
    .addColumn('name', 'text', notNull)
    .addColumn('description', 'text')
    .addColumn('variants', 'jsonb', notNull)
    .addColumn('repeats', 'integer', notNull)
    .addColumn('concurrency', 'integer', notNull)
    .addColumn('primary_scorer', 'text')
    .addColumn('baseline_experiment_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'completed', 'cancelled', 'failed')`))
    .addColumn('error', 'jsonb')
    .addColumn('case_count', 'integer', notNull)
    .addColumn('cell_count', 'integer', notNull)
    .addColumn('last_event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .addColumn('started_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('experiments_tenant_idx').on('experiments').columns(['tenant_id', 'id']).execute();

  await createChildTable(db, 'experiment_cells', 'experiment_id', 'experiments')
    // The cell's place in the experiment: cells are started in this order.
    .addColumn('seq', 'integer', notNull)
    .addColumn('case_id', 'text', notNull)
    .addColumn('case_index', 'integer', notNull)
    .addColumn('variant_index', 'integer', notNull)
    .addColumn('repeat', 'integer', notNull)
    .addColumn('input', 'text', notNull)
    .addColumn('expected', 'jsonb')
    .addColumn('metadata', 'jsonb', notNull)
    .addColumn('scorers', 'jsonb', notNull)
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

  await createEventLogTable(db, 'experiment_events', 'experiment_id', 'experiments');

  await db.schema
    .alterTable('runs')
    .addColumn('experiment_id', 'text')
    .addColumn('cell_id', 'text')
    // A variant's graph (its model, prompt or temperature applied to the version's, or a whole graph).
    .addColumn('graph_override', 'jsonb')
    .execute();

  // An eval run's thread is the eval's, not a conversation: thread lists leave it out.
  await db.schema.alterTable('threads').addColumn('source', 'text', (c) => c.notNull().defaultTo('api')).execute();

  await enableTenantIsolation(db, 'eval_suites', 'eval_cases', 'experiments', 'experiment_cells', 'experiment_events');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threads').dropColumn('source').execute();
  await db.schema.alterTable('runs').dropColumn('experiment_id').dropColumn('cell_id').dropColumn('graph_override').execute();
  await dropTables(db, 'experiment_events', 'experiment_cells', 'experiments', 'eval_cases', 'eval_suites');
}
