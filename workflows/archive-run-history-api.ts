/**
 * The run-history archive's contract: a child that every agent run starts as it ends and abandons, on
 * the run's own task queue (so a run and its archive are served by the same workers), with a workflow id
 * derived from the run's (so a retried start is a no-op).
 */
export function archiveRunHistoryWorkflowId(runId: string): string {
  return `history-${runId}`;
}
