import { TASK_QUEUES } from './task-queues.js';

/**
 * The run-history archiver's contract: one workflow per namespace, started by every worker process as it
 * starts (a second start joins the running one), on the runs' task queue. It never ends by itself: it
 * continues as new every so often to keep its history short. Terminated, it comes back with the next
 * worker start, and the queue in Postgres has lost nothing meanwhile.
 */
export const RUN_HISTORY_ARCHIVER_WORKFLOW_TYPE = 'runHistoryArchiver';
export const RUN_HISTORY_ARCHIVER_WORKFLOW_ID = 'run-history-archiver';
export const RUN_HISTORY_ARCHIVER_TASK_QUEUE = TASK_QUEUES.runs;
