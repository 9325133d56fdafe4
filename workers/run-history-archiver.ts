import type { Client } from '@temporalio/client';
import type { runHistoryArchiver } from '../workflows/run-history-archiver.js';
import { RUN_HISTORY_ARCHIVER_TASK_QUEUE, RUN_HISTORY_ARCHIVER_WORKFLOW_ID, RUN_HISTORY_ARCHIVER_WORKFLOW_TYPE } from '../workflows/run-history-archiver-api.js';

/** Starts the run-history archiver unless it is running already (every worker process asks as it starts). */
export async function ensureRunHistoryArchiver(temporal: Client): Promise<void> {
  await temporal.workflow.start<typeof runHistoryArchiver>(RUN_HISTORY_ARCHIVER_WORKFLOW_TYPE, {
    taskQueue: RUN_HISTORY_ARCHIVER_TASK_QUEUE,
    workflowId: RUN_HISTORY_ARCHIVER_WORKFLOW_ID,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
