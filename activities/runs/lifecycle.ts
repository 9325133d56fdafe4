import { agentRunFailure } from '../../workflows/agent-run-api.js';
import { Decimal } from 'decimal.js';
import type { Db } from '../../db/database.js';
import { appendRunEvents } from '../../db/run-events.js';
import type { RunStatus } from '../../db/schema.js';
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js';
import { costUsd } from '../models/prices.js';
import { sumUsage, type UsageSum } from '../models/usage.js';
import { resolveGuardrails, resolveNodes, threadHistory } from './plan.js';
import type { FinishInput, RunPlan, RunRef } from './types.js';

/**
 * The run record's transitions, each with its event, in one transaction. Every event here carries a
 * dedupe key, so a retried activity neither repeats an event nor moves the run twice.
 */

/** queued → running; reads everything the run needs (graph, tools, thread history) into its plan. */
export async function beginRun(db: Db, ref: RunRef): Promise<RunPlan> {
  return withTenant(db, ref.tenantId, async (tx) => {
    const run = await tx.selectFrom('runs').selectAll().where('id', '=', ref.runId).executeTakeFirst();
    if (!run) throw agentRunFailure('RunMissing', `run ${ref.runId} does not exist`);
    const version = await tx
      .selectFrom('agent_versions')
      .select('graph')
      .where('id', '=', run.agent_version_id)
      .executeTakeFirstOrThrow();
    const nodes = await resolveNodes(tx, ref.tenantId, version.graph);
    const history = await threadHistory(tx, ref.tenantId, run.thread_id, run.id);
    const guardrails = await resolveGuardrails(tx, ref.tenantId, version.graph);
    const prompts = nodes.flatMap((node) => (node.prompt ? [node.prompt] : []));
    await tx
      .updateTable('runs')
      .set({ status: 'running', started_at: new Date(), prompts: JSON.stringify(prompts), model: nodes[0]!.model })
      .where('id', '=', ref.runId)
      .where('status', '=', 'queued')
      .execute();
    await appendRunEvents(tx, ref.tenantId, ref.runId, [{ type: 'run.started', dedupeKey: 'run.started', data: { run_id: ref.runId } }]);
    const facing = (target: 'input' | 'output') => guardrails.filter((g) => g.target === target || g.target === 'both');
    return { ...ref, agentId: run.agent_id, input: run.input, nodes, history, inputGuardrails: facing('input'), outputGuardrails: facing('output') };
  });
}

/** running → paused, with the question on the run record. */
export async function pauseRun(db: Db, ref: RunRef & { questionId: string; question: string }): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    const pending = { id: ref.questionId, question: ref.question, asked_at: new Date().toISOString() };
    await setStatus(tx, ref, 'paused', { pending_question: JSON.stringify(pending) });
    await appendRunEvents(tx, ref.tenantId, ref.runId, [
      { type: 'run.paused', dedupeKey: `run.paused:${ref.questionId}`, data: { question_id: ref.questionId, question: ref.question } },
    ]);
  });
}

/** paused → running, once the question is answered. */
export async function resumeRun(db: Db, ref: RunRef & { questionId: string; answer: string }): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    await setStatus(tx, ref, 'running', { pending_question: null });
    await appendRunEvents(tx, ref.tenantId, ref.runId, [
      { type: 'run.resumed', dedupeKey: `run.resumed:${ref.questionId}`, data: { question_id: ref.questionId, answer: ref.answer } },
    ]);
  });
}

/** The end: status, output or error, usage and exact cost, duration, and the terminal event. */
export async function finishRun(db: Db, finish: FinishInput): Promise<void> {
  const usage = runUsage(finish.turns);
  await withTenant(db, finish.tenantId, async (tx) => {
    const run = await tx.selectFrom('runs').select(['started_at', 'created_at', 'thread_id']).where('id', '=', finish.runId).executeTakeFirstOrThrow();
    const ended = new Date();
    const durationMs = ended.getTime() - (run.started_at ?? run.created_at).getTime();
    await tx
      .updateTable('runs')
      .set({
        status: finish.status,
        output: finish.output,
        error: finish.error ? JSON.stringify(finish.error) : null,
        pending_question: null,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        cost_usd: usage.cost_usd,
        ended_at: ended,
        duration_ms: durationMs,
      })
      .where('id', '=', finish.runId)
      .where('status', 'not in', ['completed', 'failed', 'cancelled'])
      .execute();
    await tx.updateTable('threads').set({ updated_at: ended }).where('id', '=', run.thread_id).execute();
    const fullUsage = { ...usage, duration_ms: durationMs };
    const data =
      finish.status === 'completed'
        ? { output: finish.output, usage: fullUsage }
        : finish.status === 'failed'
          ? { error: finish.error, usage: fullUsage }
          : { usage: fullUsage };
    await appendRunEvents(tx, finish.tenantId, finish.runId, [{ type: `run.${finish.status}`, dedupeKey: 'run.end', data }]);
  });
}

/** Token sums (null where any turn's count is unknown) and the exact cost (null when any part is unknown). */
export function runUsage(turns: FinishInput['turns']): UsageSum & { cost_usd: string | null } {
  const sum = sumUsage(turns.map((t) => t.usage));
  let cost: Decimal | null = new Decimal(0);
  for (const turn of turns) {
    const turnCost = costUsd(turn.model, turn.usage);
    cost = cost === null || turnCost === null ? null : cost.plus(turnCost);
  }
  return { ...sum, cost_usd: cost === null ? null : cost.toFixed() };
}

async function setStatus(tx: TenantTx, ref: RunRef, status: RunStatus, extra: { pending_question: string | null }) {
  await tx.updateTable('runs').set({ status, ...extra }).where('id', '=', ref.runId).where('status', 'in', ['running', 'paused']).execute();
}
