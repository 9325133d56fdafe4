import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/**
 * Whether Temporal shows a workflow with this id, running or closed: asked after a start failed, since a
 * start that timed out on its way back may have gone through. False when Temporal says there is none and
 * when it cannot say (unreachable): the caller then records the work as not started, and a workflow that
 * did start finds that record and stops.
 */
export async function workflowExists(temporal: Client, workflowId: string): Promise<boolean> {
  return workflowState(temporal, workflowId).then(
    (state) => state !== 'none',
    () => false,
  );
}

/** The statuses of a workflow that will not run again. */
const CLOSED: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'CONTINUED_AS_NEW', 'TIMED_OUT']);

/**
 * What Temporal has under this workflow id: nothing, a workflow that is open (running, or paused, or in
 * a status this SDK does not know), or a closed one. Throws when it cannot say.
 */
export async function workflowState(temporal: Client, workflowId: string): Promise<'none' | 'open' | 'closed'> {
  try {
    const description = await temporal.workflow.getHandle(workflowId).describe();
    return CLOSED.has(description.status.name) ? 'closed' : 'open';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'none';
    throw err;
  }
}
