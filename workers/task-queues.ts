/** The task queues the platform's workers poll: agent runs, eval experiments, document ingestion. */
export const TASK_QUEUES = ['runs', 'evals', 'ingest'] as const;
export type TaskQueue = (typeof TASK_QUEUES)[number];
