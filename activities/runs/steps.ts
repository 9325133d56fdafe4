import type { Db } from '../../db/database.js';
import { appendRunEvents, appendRunEventsAfter } from '../../db/run-events.js';
import { findStepEnd, insertRunStepStatement, recordStepEnd } from '../../db/run-steps.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { crashPoint } from '../crash-points.js';
import type { StepInput, StepOutcome } from './types.js';

/**
 * The tool-call trace. A step row is keyed by (run, index), and its two events carry dedupe keys, so an
 * activity retried after a worker crash writes each step and each event exactly once.
 *
 * Begins the step; answers how it ended when an earlier attempt already ended it. The step and its
 * `tool_call.started` event are written in one round trip (db/tenant-statement.ts), and always
 * together: an event the log already holds means an earlier attempt began the step, and only then is
 * the step read back.
 */
export async function beginStep(db: Db, step: StepInput): Promise<StepOutcome | undefined> {
  const started = { node_id: step.nodeId, step_index: step.index, tool: step.call.tool, tool_call_id: step.call.id, arguments: step.call.arguments };
  const appended = await appendRunEventsAfter(db, step.tenantId, step.runId, [{ type: 'tool_call.started', dedupeKey: `tool_call.started:${step.index}`, data: started }], (scope) => [
    insertRunStepStatement(scope, {
      tenantId: step.tenantId,
      runId: step.runId,
      index: step.index,
      nodeId: step.nodeId,
      toolCallId: step.call.id,
      tool: step.call.tool,
      toolId: step.tool?.id || null, // '': a built-in offered without a catalog entry (activities/runs/skills.ts)
      arguments: step.call.arguments,
    }),
  ]);
  if (appended.length > 0) return undefined;
  return readAsTenant(db, step.tenantId, (reader) => findStepEnd(reader, step.tenantId, step.runId, step.index));
}

export async function completeStep(db: Db, step: StepInput, outcome: StepOutcome): Promise<void> {
  await withTenant(db, step.tenantId, async (tx) => {
    const durationMs = await recordStepEnd(tx, step.tenantId, step.runId, step.index, outcome);
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
    await crashPoint('complete-step.before-commit', step);
  });
  await crashPoint('complete-step.after-commit', step);
}
