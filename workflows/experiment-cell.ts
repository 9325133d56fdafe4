import { ChildWorkflowFailure, executeChild, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from './agent-run-api.js';
import type { agentRun } from './agent-run.js';
import type { ExperimentCellInput } from './experiment-api.js';
import { runSearchAttributes } from './search-attributes.js';

/**
 * A cell's own steps are short database work: local activities, run by the worker that runs the cell's
 * workflow task, without a round trip through the server each (a cell is a run plus this overhead, so
 * it counts: docs/evals.md "Benchmark"). They are idempotent, as a local activity may run again after a crash.
 */
const local = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: BOOKKEEPING_RETRY,
});

/**
 * Scoring that asks an LLM judge may take minutes: a regular activity that heartbeats, so a dead worker
 * is noticed in seconds. A scorer's own failure is a result (a failed cell), so what is retried is the
 * database or the worker, for minutes and not forever: if it gives up, the experiment records the cell
 * broken with the reason (experiment.ts).
 */
const scoring = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: BOOKKEEPING_RETRY,
});

/**
 * One cell of an experiment: its agent run, a real `agentRun` workflow (workflow id = run id) of the
 * variant's graph with `source: "eval"`, then its scoring. Each step is idempotent on the cell's row,
 * so a replay or a retried activity neither starts a second run nor scores twice. The `experiment`
 * workflow runs this itself, with the agent run as its child (experiment.ts).
 */
export async function runExperimentCell(input: ExperimentCellInput): Promise<void> {
  const start = await local.startEvalCell(input);
  if (start.kind === 'settled') return;
  try {
    await executeChild<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
      workflowId: start.runId,
      taskQueue: AGENT_RUN_TASK_QUEUE,
      args: [agentRunInput({ tenantId: input.tenantId, runId: start.runId })],
      typedSearchAttributes: runSearchAttributes({ tenantId: input.tenantId, agentId: start.agentId, source: 'eval', experimentId: input.experimentId }),
    });
  } catch (err) {
    // The run failed or was cancelled: its record says why, and scoring turns that into a failed cell.
    if (!(err instanceof ChildWorkflowFailure)) throw err;
  }
  await (start.asksModel ? scoring : local).scoreEvalCell(input);
}

/**
 * A cell as a workflow of its own, the way experiments started before the 'experiment-cells-inline'
 * patch ran their cells; kept so those histories still replay and their running cells still finish.
 */
export async function experimentCell(input: ExperimentCellInput): Promise<void> {
  return runExperimentCell(input);
}
