import type { Kysely } from 'kysely';
import { defaultNow, notNull } from './columns.js';
import { dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Runs whose Temporal history is still to be copied into run_histories. A run's end (`finishRun`) adds
 * its row in the same transaction; the one `runHistoryArchiver` workflow copies the history once the
 * run's workflow has closed and deletes the row with the copy saved. It replaces a child workflow per
 * run, which cost the Temporal server about as much as the run's own steps (docs/performance.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('run_history_queue')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('queued_at', 'timestamptz', defaultNow)
    // A run whose copy fails is tried again later, without holding up the others, and given up after a while.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'timestamptz', defaultNow)
    .execute();
  await enableTenantIsolation(db, 'run_history_queue');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'run_history_queue');
}
