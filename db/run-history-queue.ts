import { sql, type CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `run_history_queue` table: runs that have ended and whose Temporal history the archiver
 * (activities/runs/history.ts) has still to copy into `run_histories`.
 */

export interface QueuedHistory {
  run_id: string;
  tenant_id: string;
  /** Failed copies so far. */
  attempts: number;
}

/** Queues the run's history, in the transaction that records its end; queuing it again changes nothing. */
export async function queueRunHistory(tx: TenantTx, tenantId: string, runId: string): Promise<void> {
  await tx.insertInto('run_history_queue').values({ run_id: runId, tenant_id: tenantId }).onConflict((oc) => oc.column('run_id').doNothing()).execute();
}

/**
 * Every tenant's queued runs (the owner role, past row-level security) after `afterRunId` that are due
 * (not waiting after a failed copy), in run id order.
 */
export async function listQueuedHistories(db: Db, afterRunId: string, limit: number): Promise<QueuedHistory[]> {
  return db
    .selectFrom('run_history_queue')
    .select(['run_id', 'tenant_id', 'attempts'])
    .where('run_id', '>', afterRunId)
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('run_id')
    .limit(limit)
    .execute();
}

/** The workspace's queued runs, due or not, with their last failed copy's error (null before any failure). */
export async function listWorkspaceQueuedHistories(reader: TenantScoped, tenantId: string): Promise<Array<QueuedHistory & { last_error: string | null }>> {
  return reader.selectFrom('run_history_queue').select(['run_id', 'tenant_id', 'attempts', 'last_error']).where('tenant_id', '=', tenantId).orderBy('run_id').execute();
}

/** Notes a failed copy: the run is due again after `retryAfterMs`. */
export async function recordHistoryCopyFailure(tx: TenantTx, tenantId: string, runId: string, error: string, retryAfterMs: number): Promise<void> {
  await tx
    .updateTable('run_history_queue')
    .set({ attempts: sql`attempts + 1`, last_error: error, next_attempt_at: sql`now() + ${`${retryAfterMs} milliseconds`}::interval` })
    .where('run_id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** Takes the run off the queue: its history is saved in this transaction, or there is none to save. */
export async function dequeueRunHistory(tx: TenantTx, tenantId: string, runId: string): Promise<void> {
  await tx.executeQuery(dequeueRunHistoryStatement(tx, tenantId, runId));
}

/** The same as a statement, for `tenantStatements` (db/tenant-statement.ts). */
export function dequeueRunHistoryStatement(scope: TenantScoped, tenantId: string, runId: string): CompiledQuery<unknown> {
  return scope.deleteFrom('run_history_queue').where('run_id', '=', runId).where('tenant_id', '=', tenantId).compile();
}
