import { sql, type Kysely } from 'kysely';
import { notNull, timestamps } from './columns.js';
import { createAgentTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Schedules: an agent run on a cron expression or an interval. The Temporal Schedule of the same id is
 * what fires (docs/schedules.md); this row mirrors its definition. A run a firing makes names its
 * schedule and the firing's Temporal run id, so a retried firing finds the run it already made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createAgentTable(db, 'schedules')
    .addColumn('input', 'text', notNull)
    .addColumn('thread_id', 'text', (c) => c.references('threads.id').onDelete('cascade'))
    .addColumn('cron', 'text')
    .addColumn('every', 'text')
    .addColumn('time_zone', 'text', notNull)
    .addColumn('overlap', 'text', (c) => c.notNull().check(sql`overlap in ('skip', 'buffer_one', 'allow_all')`))
    .addColumn('jitter', 'text')
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('description', 'text')
    .$call(timestamps)
    .addCheckConstraint('schedules_cron_or_every', sql`(cron is null) <> (every is null)`)
    .execute();
  await db.schema.createIndex('schedules_tenant_agent_idx').on('schedules').columns(['tenant_id', 'agent_id', 'id']).execute();
  await db.schema.createIndex('schedules_tenant_idx').on('schedules').columns(['tenant_id', 'id']).execute();

  // No foreign key: a deleted schedule leaves its runs readable.
  await db.schema.alterTable('runs').addColumn('schedule_id', 'text').addColumn('schedule_firing_id', 'text').execute();
  await db.schema.createIndex('runs_schedule_idx').on('runs').columns(['schedule_id', 'id']).where(sql.ref('schedule_id'), 'is not', null).execute();
  await db.schema.createIndex('runs_schedule_firing_idx').unique().on('runs').column('schedule_firing_id').where(sql.ref('schedule_firing_id'), 'is not', null).execute();

  await enableTenantIsolation(db, 'schedules');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_schedule_firing_idx').execute();
  await db.schema.dropIndex('runs_schedule_idx').execute();
  await db.schema.alterTable('runs').dropColumn('schedule_id').dropColumn('schedule_firing_id').execute();
  await dropTables(db, 'schedules');
}
