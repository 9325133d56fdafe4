import { agentRunFailure } from '../../workflows/agent-run-api.js';
import { Decimal } from 'decimal.js';
import type { Db } from '../../db/database.js';
import { appendRunEvents } from '../../db/run-events.js';
import { queueRunHistory } from '../../db/run-history-queue.js';
import { listProviderPrices } from '../../db/provider-connections.js';
import { isTerminal, lockRunWithGraph, markRunPaused, markRunResumed, markRunRunning, recordRunEnd, type TerminalStatus } from '../../db/runs.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { touchThread } from '../../db/threads.js';
import { crashPoint } from '../crash-points.js';
import { costUsd, type WorkspacePrices } from '../models/prices.js';
import { sumUsage, type UsageSum } from '../models/usage.js';
import { resolveGuardrails, resolveNodes, threadHistory } from './plan.js';
import { settleSubagents, withSubagentUsage } from './subagents.js';
import type { BegunRun, FinishInput, RunRef } from './types.js';

/**
 * The run record's transitions, each with its event, in one transaction. Every event here carries a
 * dedupe key, so a retried activity neither repeats an event nor moves the run twice.
 */

/** queued → running; reads everything the run needs (graph, tools, thread history) into its plan. */
export async function beginRun(db: Db, ref: RunRef): Promise<BegunRun> {
  return withTenant(db, ref.tenantId, async (tx) => {
    const run = await lockRunWithGraph(tx, ref.tenantId, ref.runId);
    if (!run) throw agentRunFailure('RunMissing', `run ${ref.runId} does not exist`);
    if (isTerminal(run.status)) {
      // Began and ended already (EndedRun): it ends as recorded.
      if (run.started_at) return { ...ref, ended: { status: run.status as TerminalStatus, output: run.output, error: run.error } };
      // Ended before it began: its workflow's start was reported failed (activities/runs/start-run-workflow.ts),
      // yet the start had gone through. Nothing runs; the end stays the one recorded.
      throw agentRunFailure('RunEnded', `run ${ref.runId} ended (${run.status}) before its workflow began it`);
    }
    if (!run.version_graph) throw new Error(`version ${run.agent_version_id} of run ${ref.runId} does not exist`);
    // An eval's run follows its variant's graph (db/runs.ts EvalCellRun).
    const graph = run.graph_override ?? run.version_graph;
    const nodes = await resolveNodes(tx, ref.tenantId, graph);
    const history = await threadHistory(tx, ref.tenantId, run.thread_id, run.id);
    const guardrails = await resolveGuardrails(tx, ref.tenantId, graph);
    const prompts = nodes.flatMap((node) => (node.prompt ? [node.prompt] : []));
    await markRunRunning(tx, ref.tenantId, ref.runId, { prompts, model: nodes[0]!.model });
    await appendRunEvents(tx, ref.tenantId, ref.runId, [{ type: 'run.started', dedupeKey: 'run.started', data: { run_id: ref.runId } }]);
    const facing = (target: 'input' | 'output') => guardrails.filter((g) => g.target === target || g.target === 'both');
    return { ...ref, agentId: run.agent_id, input: run.input, source: run.source, nodes, history, inputGuardrails: facing('input'), outputGuardrails: facing('output') };
  });
}

/** running → paused, with the question on the run record. */
export async function pauseRun(db: Db, ref: RunRef & { questionId: string; question: string }): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    const pending = { id: ref.questionId, question: ref.question, asked_at: new Date().toISOString() };
    await markRunPaused(tx, ref.tenantId, ref.runId, pending);
    await appendRunEvents(tx, ref.tenantId, ref.runId, [
      { type: 'run.paused', dedupeKey: `run.paused:${ref.questionId}`, data: { question_id: ref.questionId, question: ref.question } },
    ]);
  });
}

/**
 * paused → running, once the question is answered; a null answer: the question was withdrawn (the
 * subagent that asked it ended first, docs/subagents.md).
 */
export async function resumeRun(db: Db, ref: RunRef & { questionId: string; answer: string | null }): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    await markRunResumed(tx, ref.tenantId, ref.runId);
    await appendRunEvents(tx, ref.tenantId, ref.runId, [
      { type: 'run.resumed', dedupeKey: `run.resumed:${ref.questionId}`, data: { question_id: ref.questionId, answer: ref.answer } },
    ]);
  });
}

/** The end: status, output or error, usage and exact cost, duration, the terminal event, and the history queued for archiving. */
export async function finishRun(db: Db, finish: FinishInput): Promise<void> {
  await withTenant(db, finish.tenantId, async (tx) => {
    // Priced as the workspace's provider connections say now, at the run's end.
    const ownUsage = runUsage(finish.turns, await listProviderPrices(tx, finish.tenantId));
    // A subagent has recorded its end before its parent can (the parent waits for it), so its usage is final.
    const usage = withSubagentUsage(ownUsage, await settleSubagents(tx, finish.tenantId, finish.runId));
    const { threadId, endedAt, durationMs, recordedBefore } = await recordRunEnd(tx, finish.tenantId, finish.runId, {
      status: finish.status,
      output: finish.output,
      error: finish.error,
      usage,
    });
    // A retried finish: the thread was touched with the end, and a later run may have touched it since.
    if (!recordedBefore) await touchThread(tx, finish.tenantId, threadId, { at: endedAt });
    const fullUsage = { ...usage, duration_ms: durationMs };
    const data =
      finish.status === 'completed'
        ? { output: finish.output, usage: fullUsage }
        : finish.status === 'failed'
          ? { error: finish.error, usage: fullUsage }
          : { usage: fullUsage };
    await appendRunEvents(tx, finish.tenantId, finish.runId, [{ type: `run.${finish.status}`, dedupeKey: 'run.end', data }]);
    // The archiver copies the history once the workflow has closed (activities/runs/history.ts).
    await queueRunHistory(tx, finish.tenantId, finish.runId);
    await crashPoint('finish-run.before-commit', finish);
  });
  await crashPoint('finish-run.after-commit', finish);
}

/**
 * Token sums (null where any turn's count is unknown) and the exact cost (null when any part is
 * unknown), at the workspace's connection prices where it has them.
 */
export function runUsage(turns: FinishInput['turns'], workspacePrices?: WorkspacePrices): UsageSum & { cost_usd: string | null } {
  const sum = sumUsage(turns.map((t) => t.usage));
  let cost: Decimal | null = new Decimal(0);
  for (const turn of turns) {
    const turnCost = costUsd(turn.model, turn.usage, process.env, workspacePrices);
    cost = cost === null || turnCost === null ? null : cost.plus(turnCost);
  }
  return { ...sum, cost_usd: cost === null ? null : cost.toFixed() };
}
