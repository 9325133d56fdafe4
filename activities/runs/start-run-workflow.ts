import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from '../../workflows/agent-run-api.js';
import type { agentRun } from '../../workflows/agent-run.js';
import { runSearchAttributes } from '../../workflows/search-attributes.js';
import { workflowExists } from '../workflow-state.js';
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
 * id, running or closed (closed ones for the namespace's retention).
 */
export async function startAgentRunWorkflow(temporal: Client, run: RunToStart): Promise<void> {
  await temporal.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
    workflowId: run.runId,
    // A run runs once: a late second start (a channel message's retry, the stranded-work sweep) must not
    // run an ended run again.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    taskQueue: AGENT_RUN_TASK_QUEUE,
    args: [agentRunInput(run)],
    typedSearchAttributes: runSearchAttributes(run),
  });
}

/** The run was recorded but its workflow could not be started; the run has been ended `failed` with this message. */
export class RunNotStartedError extends Error {}

/**
 * Starts a just-recorded run's workflow, or, when Temporal refused the start and has no such workflow,
 * ends the run `failed` (error code `unavailable`) and throws RunNotStartedError: the run's record says
 * what happened rather than staying `queued` with nothing to run it. A workflow that started after all
 * (a start that timed out on its way back) finds its run ended and stops (beginRun).
 */
export async function startRunOrEndIt(deps: { db: Db; temporal: Client }, run: RunToStart): Promise<void> {
  try {
    await startAgentRunWorkflow(deps.temporal, run);
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError || (await workflowExists(deps.temporal, run.runId))) return;
    const message = `the run's workflow could not be started: ${err instanceof Error ? err.message : String(err)}`;
    // Not queued any more: a workflow that started after all has begun it.
    if (!(await endUnstartedRun(deps, run, { status: 'failed', error: { code: 'unavailable', message } }))) return;
    throw new RunNotStartedError(message);
  }
}
