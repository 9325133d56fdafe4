/**
 * The per-run history archive's contract: a child that agent runs started before the history queue
 * (`patched('history-queue')` in agent-run.ts) start as they end and abandon, on the run's own task queue
 * (so a run and its archive are served by the same workers), with a workflow id derived from the run's
 * (so a retried start is a no-op). Newer runs are archived by `runHistoryArchiver`.
 */
export function archiveRunHistoryWorkflowId(runId: string): string {
  return `history-${runId}`;
}
