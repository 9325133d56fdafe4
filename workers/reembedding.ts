import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Embedder } from '../activities/embedding/index.js';
import { hasVectorsEmbeddedOtherwise } from '../activities/embedding/reembed.js';
import type { Db } from '../db/database.js';
import type { reembedVectors } from '../workflows/reembed-vectors.js';
import { REEMBED_VECTORS_TASK_QUEUE, REEMBED_VECTORS_WORKFLOW_TYPE, reembedVectorsWorkflowId } from '../workflows/reembed-vectors-api.js';

/**
 * Starts the `reembedVectors` workflow when the database holds vectors made by other weights than this
 * process's embedder (after an upgrade that changed them). Every worker process asks at start; the
 * workflow id names the target weights, so processes starting together share one workflow. Answers its
 * handle, or undefined when every vector is current.
 */
export async function startReembeddingWhenNeeded(db: Db, temporal: Client, embedder: Embedder): Promise<WorkflowHandle<typeof reembedVectors> | undefined> {
  if (!(await hasVectorsEmbeddedOtherwise(db, embedder))) return undefined;
  const weights = { embedding_model: embedder.modelId, embedding_dtype: embedder.dtype };
  const workflowId = reembedVectorsWorkflowId(weights);
  const handle = await temporal.workflow.start<typeof reembedVectors>(REEMBED_VECTORS_WORKFLOW_TYPE, {
    taskQueue: REEMBED_VECTORS_TASK_QUEUE,
    workflowId,
    args: [{ weights }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  console.log(`[worker] vectors made by other weights found: re-embedding them with ${embedder.modelId} ${embedder.dtype} (workflow ${workflowId})`);
  return handle;
}
