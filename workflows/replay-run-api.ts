import { TASK_QUEUES } from './task-queues.js';

/**
 * The replay workflow's contract, shared by the workflow, its activity and the API that waits for it
 * (`client.workflow.execute<typeof replayRun>(REPLAY_RUN_WORKFLOW_TYPE, …)` through a type-only import).
 * Replaying is CPU work on a tenant's behalf, so it runs on a worker, on a queue of its own.
 */
export const REPLAY_RUN_WORKFLOW_TYPE = 'replayRun';
export const REPLAY_RUN_TASK_QUEUE = TASK_QUEUES.replays;

export interface ReplayRunInput {
  tenantId: string;
  runId: string;
}

export interface ReplayRunResult {
  /** False when the current workflow code takes a different path on the stored history. */
  deterministic: boolean;
  /** Why it is not deterministic (`DeterminismViolationError: …`); null when it is. */
  error: string | null;
  /** How many events the stored history has. */
  eventCount: number;
}

/** The ApplicationFailure types the workflow ends with; none is retryable. */
export const REPLAY_RUN_FAILURES = {
  /** The run has no stored history (it is stored once the run has ended). */
  HistoryMissing: 'HistoryMissing',
} as const;
