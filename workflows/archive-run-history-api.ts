import { AGENT_RUN_TASK_QUEUE } from './agent-run-api.js';

/**
 * The run-history archive's contract: a child that every agent run starts as it ends and abandons, on
 * the run's own task queue, with a workflow id derived from the run's (so a retried start is a no-op).
 */
export const ARCHIVE_RUN_HISTORY_TASK_QUEUE = AGENT_RUN_TASK_QUEUE;

export function archiveRunHistoryWorkflowId(runId: string): string {
  return `history-${runId}`;
}
