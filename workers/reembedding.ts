import type { Client, WorkflowHandle } from '@temporalio/client';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { weightsOf, type Embedder } from '../activities/embedding/index.js';
import type { Activities } from '../activities/index.js';
import { hasVectorsEmbeddedOtherwise } from '../activities/embedding/reembed.js';
import type { Db } from '../db/database.js';
import type { reembedVectors } from '../workflows/reembed-vectors.js';
import { reembedBatchTaskQueue, REEMBED_VECTORS_TASK_QUEUE, REEMBED_VECTORS_WORKFLOW_TYPE, reembedVectorsInput, reembedVectorsWorkflowId } from '../workflows/reembed-vectors-api.js';

/**
 * Starts the `reembedVectors` workflow when the database holds vectors made by other weights than this
 * process's embedder (after an upgrade that changed them). Every worker process asks at start; the
 * workflow id names the target weights, so processes starting together share one workflow. Answers its
 * handle, or undefined when every vector is current.
 */
export async function startReembeddingWhenNeeded(db: Db, temporal: Client, embedder: Embedder): Promise<WorkflowHandle<typeof reembedVectors> | undefined> {
  if (!(await hasVectorsEmbeddedOtherwise(db, embedder))) return undefined;
  const weights = weightsOf(embedder);
  const workflowId = reembedVectorsWorkflowId(weights);
  const handle = await temporal.workflow.start<typeof reembedVectors>(REEMBED_VECTORS_WORKFLOW_TYPE, {
    taskQueue: REEMBED_VECTORS_TASK_QUEUE,
    workflowId,
    args: [reembedVectorsInput(weights)],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  console.log(`[worker] vectors made by other weights found: re-embedding them with ${embedder.modelId} ${embedder.dtype} (workflow ${workflowId})`);
  return handle;
}

/**
 * The worker that takes the re-embedding batches of this process's weights, from their own task queue
 * (workflows/reembed-vectors-api.ts), one at a time per embedding process: a batch is embedder work, and
 * more at once would only queue inside the pool.
 */
export function createReembedBatchWorker(options: {
  connection: NativeConnection;
  namespace: string;
  activities: Activities;
  embedder: Embedder;
  embeddingThreads: number;
}): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: reembedBatchTaskQueue(weightsOf(options.embedder)),
    activities: { reembedVectorsBatch: options.activities.reembedVectorsBatch },
    maxConcurrentActivityTaskExecutions: options.embeddingThreads,
  });
}
