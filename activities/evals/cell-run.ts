import { Decimal } from 'decimal.js';
import type { Db } from '../../db/database.js';
import { findCell, lockCell, markCellRunning, recordCellResult, type CellResult } from '../../db/experiment-cells.js';
import { appendExperimentEvents } from '../../db/experiment-events.js';
import { findExperiment } from '../../db/experiments.js';
import { listProviderNames, listProviderPrices } from '../../db/provider-connections.js';
import { listRunSteps } from '../../db/run-steps.js';
import { createQueuedRun, findRun, isTerminal } from '../../db/runs.js';
import type { ExperimentCell, Run } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { ExperimentCellInput } from '../../workflows/experiment-api.js';
import type { Embedder } from '../embedding/index.js';
import { costUsd, type WorkspacePrices } from '../models/prices.js';
import type { ModelSettings } from '../models/settings.js';
import { workspaceModelSettings } from '../models/workspace-connections.js';
import { sumUsage } from '../models/usage.js';
import { cellEndEvent, cellStartedEvent } from './cell-events.js';
import { scoreCell } from './scorers/score-cell.js';
import type { ScorerConfig, ScorerModelCall } from './scorers/types.js';

/** Where a cell stands when its workflow starts: its run to follow, or already settled (a replay, or it failed to start). */
export type EvalCellStart =
  /** `asksModel`: its scoring calls a model (an LLM judge), so it may take long. */
  | { kind: 'run'; runId: string; agentId: string; asksModel: boolean }
  | { kind: 'settled' };

/**
 * pending → running: creates the cell's run (`source: "eval"`, the variant's version and graph) once,
 * under the cell's row lock, so a retry finds the run it already made.
 */
export async function startEvalCell(db: Db, input: ExperimentCellInput): Promise<EvalCellStart> {
  return withTenant(db, input.tenantId, async (tx) => {
    const cell = await lockCell(tx, input.tenantId, input.cellId);
    if (!cell || (cell.status !== 'pending' && cell.status !== 'running')) return { kind: 'settled' };
    const experiment = await findExperiment(tx, input.tenantId, input.experimentId);
    if (!experiment) return { kind: 'settled' };
    const asksModel = cell.scorers.some((scorer) => scorer.type === 'llm_judge');
    if (cell.run_id) return { kind: 'run', runId: cell.run_id, agentId: experiment.agent_id, asksModel };

    const variant = experiment.variants[cell.variant_index]!;
    const queued = await createQueuedRun(tx, {
      tenantId: input.tenantId,
      agentId: experiment.agent_id,
      input: cell.input,
      source: 'eval',
      evalCell: { experimentId: experiment.id, cellId: cell.id, agentVersionId: variant.resolved.agent_version_id, graph: variant.resolved.graph },
    });
    if (!queued.queued) {
      const result = failedBeforeRun(`the cell's run could not be created (${queued.reason})`);
      await recordCellResult(tx, input.tenantId, cell.id, result);
      await appendExperimentEvents(tx, input.tenantId, experiment.id, [cellEndEvent(cell, result)]);
      return { kind: 'settled' };
    }
    await markCellRunning(tx, input.tenantId, cell.id, queued.runId);
    await appendExperimentEvents(tx, input.tenantId, experiment.id, [cellStartedEvent(cell, queued.runId)]);
    return { kind: 'run', runId: queued.runId, agentId: experiment.agent_id, asksModel };
  });
}

/** A cell that failed without a run to measure: nothing used, nothing known of its cost. */
export function failedBeforeRun(message: string): CellResult {
  return {
    status: 'failed',
    output: null,
    scores: null,
    passed: false,
    latencyMs: null,
    usage: { prompt_tokens: null, completion_tokens: null, total_tokens: null },
    costUsd: null,
    error: { code: 'cell_error', message },
  };
}

export interface ScoringDeps {
  db: Db;
  embedder: () => Embedder;
  signal: AbortSignal;
}

/**
 * running → completed or failed, after the cell's run ended: its scorers read the run's output, tools,
 * cost and latency. A failed or cancelled run fails the cell with the run's error; a scorer that breaks
 * fails it with the scorer's reason. An LLM judge's tokens and cost are added to the cell's.
 */
export async function scoreEvalCell({ db, embedder, signal }: ScoringDeps, input: ExperimentCellInput): Promise<void> {
  const read = await withTenant(db, input.tenantId, async (tx) => {
    const cell = await findCell(tx, input.tenantId, input.cellId);
    if (!cell || cell.status !== 'running' || !cell.run_id) return undefined;
    const run = await findRun(tx, input.tenantId, cell.run_id);
    const steps = run ? await listRunSteps(tx, input.tenantId, run.id) : [];
    const workspace = { workspaceProviders: await listProviderNames(tx, input.tenantId), workspacePrices: await listProviderPrices(tx, input.tenantId) };
    return { cell, run, toolCalls: steps.map((step) => step.tool), workspace };
  });
  if (!read) return;
  const result = await cellResult(read.cell, read.run, read.toolCalls, { embedder, signal, modelSettings: workspaceModelSettings(db, input.tenantId), ...read.workspace });
  await withTenant(db, input.tenantId, async (tx) => {
    if (await recordCellResult(tx, input.tenantId, input.cellId, result)) {
      await appendExperimentEvents(tx, input.tenantId, input.experimentId, [cellEndEvent(read.cell, result)]);
    }
  });
}

async function cellResult(
  cell: ExperimentCell,
  run: Run | undefined,
  toolCalls: string[],
  context: Pick<ScoringDeps, 'embedder' | 'signal'> & { modelSettings: ModelSettings; workspaceProviders: ReadonlySet<string>; workspacePrices: WorkspacePrices },
): Promise<CellResult> {
  if (!run) return failedBeforeRun(`the cell's run ${cell.run_id} no longer exists`);
  const usage = { prompt_tokens: run.prompt_tokens, completion_tokens: run.completion_tokens };
  const measured = { latencyMs: run.duration_ms, usage: sumUsage([usage]), costUsd: run.cost_usd };
  if (!isTerminal(run.status) || run.status !== 'completed') {
    const error = run.error ?? { code: 'run_error', message: `the run ended ${run.status}` };
    return { status: 'failed', output: run.output, scores: null, passed: false, ...measured, error };
  }

  const judgeCalls: ScorerModelCall[] = [];
  const scored = await scoreCell(
    cell.scorers as ScorerConfig[],
    {
      input: cell.input,
      output: run.output,
      expected: cell.expected,
      metadata: cell.metadata,
      toolCalls,
      costUsd: run.cost_usd,
      latencyMs: run.duration_ms,
    },
    {
      signal: context.signal,
      embedder: context.embedder,
      modelSettings: context.modelSettings,
      workspaceProviders: context.workspaceProviders,
      recordModelCall: (call) => judgeCalls.push(call),
    },
  );
  const total = withJudgeCalls(usage, run.cost_usd, judgeCalls, context.workspacePrices);
  return {
    status: scored.failure === null ? 'completed' : 'failed',
    output: run.output,
    scores: scored.scores,
    passed: scored.failure === null && scored.passed,
    latencyMs: run.duration_ms,
    usage: total.usage,
    costUsd: total.costUsd,
    error: scored.failure === null ? null : { code: 'scorer_error', message: scored.failure },
  };
}

/** The run's usage and cost plus the judge calls': a part whose cost is unknown makes the total unknown. */
function withJudgeCalls(runUsage: { prompt_tokens: number | null; completion_tokens: number | null }, runCost: string | null, calls: ScorerModelCall[], prices: WorkspacePrices) {
  let cost: Decimal | null = runCost === null ? null : new Decimal(runCost);
  for (const call of calls) {
    const callCost = costUsd(call.model, call.usage, process.env, prices);
    cost = cost === null || callCost === null ? null : cost.plus(callCost);
  }
  return { usage: sumUsage([runUsage, ...calls.map((call) => call.usage)]), costUsd: cost === null ? null : cost.toFixed() };
}
