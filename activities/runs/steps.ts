import { appendRunEvents } from '../../db/run-events.js';
import type { Db } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { StepInput, StepOutcome } from './types.js';

/**
 * The tool-call trace. A step row is keyed by (run, index), and its two events carry dedupe keys, so an
 * activity retried after a worker crash writes each step and each event exactly once.
 */
export async function beginStep(db: Db, step: StepInput): Promise<void> {
  await withTenant(db, step.tenantId, async (tx) => {
    await tx
      .insertInto('run_steps')
      .values({
        id: newId('ste'),
        tenant_id: step.tenantId,
        run_id: step.runId,
        index: step.index,
        node_id: step.nodeId,
        tool_call_id: step.call.id,
        tool: step.call.tool,
        tool_id: step.tool?.id ?? null,
        arguments: JSON.stringify(step.call.arguments),
        status: 'running',
        result: null,
        error: null,
      })
      .onConflict((oc) => oc.columns(['run_id', 'index']).doNothing())
      .execute();
    await appendRunEvents(tx, step.tenantId, step.runId, [
      {
        type: 'tool_call.started',
        dedupeKey: `tool_call.started:${step.index}`,
        data: { node_id: step.nodeId, step_index: step.index, tool: step.call.tool, tool_call_id: step.call.id, arguments: step.call.arguments },
      },
    ]);
  });
}

export async function completeStep(db: Db, step: StepInput, outcome: StepOutcome): Promise<void> {
  await withTenant(db, step.tenantId, async (tx) => {
    const row = await tx
      .selectFrom('run_steps')
      .select(['started_at', 'status'])
      .where('run_id', '=', step.runId)
      .where('index', '=', step.index)
      .executeTakeFirstOrThrow();
    const ended = new Date();
    const durationMs = ended.getTime() - row.started_at.getTime();
    if (row.status === 'running') {
      await tx
        .updateTable('run_steps')
        .set({
          status: outcome.ok ? 'completed' : 'failed',
          result: outcome.ok ? JSON.stringify(outcome.result ?? null) : null,
          error: outcome.ok ? null : outcome.error,
          ended_at: ended,
          duration_ms: durationMs,
        })
        .where('run_id', '=', step.runId)
        .where('index', '=', step.index)
        .execute();
    }
    await appendRunEvents(tx, step.tenantId, step.runId, [
      {
        type: 'tool_call.completed',
        dedupeKey: `tool_call.completed:${step.index}`,
        data: {
          node_id: step.nodeId,
          step_index: step.index,
          tool: step.call.tool,
          tool_call_id: step.call.id,
          ...(outcome.ok ? { result: outcome.result ?? null } : { error: outcome.error }),
          duration_ms: durationMs,
        },
      },
    ]);
  });
}
