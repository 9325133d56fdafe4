import { sql, type CompiledQuery } from 'kysely';
import { newId } from './ids.js';
import type { RunStep } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `run_steps` table: a run's tool calls, keyed by (run, index). */

export interface NewRunStep {
  tenantId: string;
  runId: string;
  index: number;
  nodeId: string;
  toolCallId: string;
  tool: string;
  toolId: string | null;
  arguments: unknown;
}

/**
 * Records a running step; a step already recorded at this index (a retried activity) is left as it is,
 * and so is a run that is not the tenant's (the foreign key alone would not see the tenant). A statement
 * to run with the step's `tool_call.started` event (activities/runs/steps.ts beginStep).
 */
export function insertRunStepStatement(scope: TenantScoped, step: NewRunStep): CompiledQuery {
  // INSERT … SELECT, so the run's row decides; its values are cast, as a select list's parameters take no type from the columns.
  return sql`
    insert into run_steps (id, tenant_id, run_id, index, node_id, tool_call_id, tool, tool_id, arguments, status)
    select ${newId('ste')}::text, runs.tenant_id, runs.id, ${step.index}::integer, ${step.nodeId}::text, ${step.toolCallId}::text,
           ${step.tool}::text, ${step.toolId}::text, ${JSON.stringify(step.arguments)}::jsonb, 'running'
    from runs where runs.id = ${step.runId} and runs.tenant_id = ${step.tenantId}
    on conflict (run_id, index) do nothing
  `.compile(scope);
}

/** How the step ended, when it has: what an earlier attempt recorded. */
export async function findStepEnd(tx: TenantScoped, tenantId: string, runId: string, index: number): Promise<StepEnd | undefined> {
  const row = await tx
    .selectFrom('run_steps')
    .select(['status', 'result', 'error'])
    .where('run_id', '=', runId)
    .where('index', '=', index)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row || row.status === 'running') return undefined;
  return row.status === 'completed' ? { ok: true, result: row.result } : { ok: false, error: row.error ?? '' };
}

export type StepEnd = { ok: true; result: unknown } | { ok: false; error: string };

/**
 * Records how the step ended, unless it already has (a retried activity), and answers how long it took
 * from its start to now.
 */
export async function recordStepEnd(tx: TenantTx, tenantId: string, runId: string, index: number, end: StepEnd): Promise<number> {
  const step = { run_id: runId, index, tenant_id: tenantId };
  const row = await tx.selectFrom('run_steps').select(['started_at', 'status']).where((eb) => eb.and(step)).executeTakeFirstOrThrow();
  const ended = new Date();
  const durationMs = ended.getTime() - row.started_at.getTime();
  if (row.status === 'running') {
    await tx
      .updateTable('run_steps')
      .set({
        status: end.ok ? 'completed' : 'failed',
        result: end.ok ? JSON.stringify(end.result ?? null) : null,
        error: end.ok ? null : end.error,
        ended_at: ended,
        duration_ms: durationMs,
      })
      .where((eb) => eb.and(step))
      .execute();
  }
  return durationMs;
}

/** The run's steps in order. */
export async function listRunSteps(reader: TenantScoped, tenantId: string, runId: string): Promise<RunStep[]> {
  return reader.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('tenant_id', '=', tenantId).orderBy('index').execute();
}
