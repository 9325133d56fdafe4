import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from '../../workflows/agent-run-api.js';
import type { agentRun } from '../../workflows/agent-run.js';
import { runSearchAttributes } from '../../workflows/search-attributes.js';
import { startsEagerly } from '../eager-start.js';
import { startRecordedWork } from '../start-recorded-work.js';
import { tenantFairness } from '../tenant-fairness.js';
import { endUnstartedRun } from './unstarted-run.js';

/** What a run's workflow is started with: the run's id and what the Temporal UI finds it by. */
export interface RunToStart {
  tenantId: string;
  runId: string;
  agentId: string;
  source: string;
}

/**
 * Starts the run's workflow: id = run id, on the `runs` queue, findable in the Temporal UI by tenant,
 * agent and source. Throws WorkflowExecutionAlreadyStartedError while Temporal holds a workflow of that
 * id, running or closed (closed ones for the namespace's retention). Answers whether its first task came
 * back with the start, to a worker of this process (activities/eager-start.ts).
 */
export async function startAgentRunWorkflow(temporal: Client, run: RunToStart): Promise<{ eagerlyStarted: boolean }> {
  const handle = await temporal.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
    workflowId: run.runId,
    // A run runs once: a late second start (a channel message's retry, the stranded-work sweep) must not
    // run an ended run again.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    taskQueue: AGENT_RUN_TASK_QUEUE,
    args: [agentRunInput(run)],
    typedSearchAttributes: runSearchAttributes(run),
    priority: tenantFairness(run.tenantId),
    // Its first task in the start's reply when this process has the worker (~a task dispatch less).
    requestEagerStart: startsEagerly(temporal),
  });
  return { eagerlyStarted: handle.eagerlyStarted };
}

/**
 * Starts a just-recorded run's workflow, or, when Temporal refused the start and has no such workflow,
 * ends the run `failed` (error code `unavailable`) and throws WorkNotStartedError (activities/start-recorded-work.ts).
 */
export async function startRunOrEndIt(deps: { db: Db; temporal: Client }, run: RunToStart): Promise<void> {
  await startRecordedWork({
    temporal: deps.temporal,
    workflowId: run.runId,
    what: 'run',
    start: () => startAgentRunWorkflow(deps.temporal, run),
    endUnstarted: (message) => endUnstartedRun(deps, run, { status: 'failed', error: { code: 'unavailable', message } }),
  });
}
