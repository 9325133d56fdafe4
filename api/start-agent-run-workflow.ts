import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { NewRun } from '../db/runs.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from '../workflows/agent-run-api.js';
import type { agentRun } from '../workflows/agent-run.js';
import { runSearchAttributes } from '../workflows/search-attributes.js';


/** Starts the run's workflow: id = run id, on the `runs` queue, findable in the Temporal UI by tenant, agent and source. */
export async function startAgentRunWorkflow(temporal: Client, run: NewRun & { runId: string }): Promise<void> {
  await temporal.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
    workflowId: run.runId,
    // A run runs once: a late second start (a channel message's retry) must not run an ended run again.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    taskQueue: AGENT_RUN_TASK_QUEUE,
    args: [agentRunInput(run)],
    typedSearchAttributes: runSearchAttributes(run),
  });
}
