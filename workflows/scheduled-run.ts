import { ApplicationFailure, ChildWorkflowFailure, executeChild, isCancellation, ParentClosePolicy, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from './agent-run-api.js';
import type { agentRun } from './agent-run.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { SCHEDULED_RUN_NOT_STARTED, type ScheduledRunInput, type ScheduledRunResult } from './scheduled-run-api.js';
import { runSearchAttributes } from './search-attributes.js';

const bookkeeping = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: BOOKKEEPING_RETRY });

/**
 * One firing of a schedule (workflows/scheduled-run-api.ts): records the run once (the firing's Temporal
 * run id makes a retried activity find the run it already made), then runs it as its child and waits for it.
 */
export async function scheduledRun(input: ScheduledRunInput): Promise<ScheduledRunResult> {
  const start = await bookkeeping.startScheduledRun({ ...input, firingId: workflowInfo().firstExecutionRunId });
  if (start.kind === 'schedule_deleted') return { runId: null, status: 'schedule_deleted' };
  if (start.kind === 'not_started') {
    throw ApplicationFailure.create({ type: SCHEDULED_RUN_NOT_STARTED, message: start.message, nonRetryable: true });
  }
  try {
    await executeChild<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
      workflowId: start.runId,
      taskQueue: AGENT_RUN_TASK_QUEUE,
      args: [agentRunInput({ tenantId: input.tenantId, runId: start.runId })],
      typedSearchAttributes: runSearchAttributes({ tenantId: input.tenantId, agentId: start.agentId, source: 'schedule' }),
      // Were the firing ended from outside, its run is cancelled the ordinary way (and records it) rather than cut off.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
    return { runId: start.runId, status: 'completed' };
  } catch (err) {
    // The run failed or was cancelled (POST /v1/runs/{id}/cancel): its record says why; the firing did its job.
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    return { runId: start.runId, status: isCancellation(err) ? 'cancelled' : 'failed' };
  }
}
