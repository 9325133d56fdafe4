/**
 * Every task queue the platform's workers poll, named once. Each workflow's contract module
 * (`*-api.ts`) says which of these it runs on; workers poll all of them.
 */
export const TASK_QUEUES = {
  /** Agent runs and the archiving of their histories. */
  runs: 'runs',
  /** Eval experiments. */
  evals: 'evals',
  /** Document conversion, chunking, embedding and graph extraction. */
  ingest: 'ingest',
  /** Replays of stored run histories (CPU-bound; their worker runs few at a time). */
  replays: 'replays',
} as const;

export type TaskQueue = (typeof TASK_QUEUES)[keyof typeof TASK_QUEUES];

export const ALL_TASK_QUEUES: TaskQueue[] = Object.values(TASK_QUEUES);
