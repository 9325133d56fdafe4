import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/**
 * Whether Temporal shows a workflow with this id, running or closed: asked after a start failed, since a
 * start that timed out on its way back may have gone through. False when Temporal says there is none and
 * when it cannot say (unreachable): the caller then records the work as not started, and a workflow that
 * did start finds that record and stops.
 */
export async function workflowExists(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch {
    return false;
  }
}

/** What Temporal has under this workflow id: nothing, a running workflow, or a closed one. Throws when it cannot say. */
export async function workflowState(temporal: Client, workflowId: string): Promise<'none' | 'running' | 'closed'> {
  try {
    const description = await temporal.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING' ? 'running' : 'closed';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'none';
    throw err;
  }
}
