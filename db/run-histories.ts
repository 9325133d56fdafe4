import type { CompiledQuery } from 'kysely';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `run_histories` table: each finished run's Temporal history, kept for replay. */

/** Stores the run's history as JSON text, replacing an earlier copy (a retried activity). */
export function saveRunHistoryStatement(scope: TenantScoped, tenantId: string, runId: string, history: string, eventCount: number): CompiledQuery<unknown> {
  return scope
    .insertInto('run_histories')
    .values({ run_id: runId, tenant_id: tenantId, history, event_count: eventCount })
    .onConflict((oc) => oc.column('run_id').doUpdateSet({ history, event_count: eventCount }))
    .compile();
}

/** The stored history (parsed JSON) and its number of events; undefined until the run has ended. */
export async function findRunHistory(tx: TenantTx, tenantId: string, runId: string): Promise<{ history: unknown; event_count: number } | undefined> {
  return tx.selectFrom('run_histories').select(['history', 'event_count']).where('run_id', '=', runId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Whether the run's history is stored, without reading it. */
export async function hasRunHistory(tx: TenantTx, tenantId: string, runId: string): Promise<boolean> {
  const row = await tx.selectFrom('run_histories').select('run_id').where('run_id', '=', runId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row !== undefined;
}
