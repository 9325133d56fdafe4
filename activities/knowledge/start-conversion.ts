import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { CONVERT_DOCUMENT_TASK_QUEUE, CONVERT_DOCUMENT_WORKFLOW_TYPE, type DocumentRef } from '../../workflows/convert-document-api.js';
import type { convertDocument } from '../../workflows/convert-document.js';
import { tenantFairness } from '../tenant-fairness.js';

/**
 * Starts the document's background processing (conversion, embedding, graph extraction): the
 * `convertDocument` workflow with id `ingest-<document id>`. Throws WorkflowExecutionAlreadyStartedError
 * while Temporal holds one, running or closed: a document is processed once, however many times that is
 * asked for (the upload, the stranded-work sweep, which asks only in the first 50 minutes).
 */
export async function startDocumentConversion(temporal: Client, document: DocumentRef): Promise<void> {
  await temporal.workflow.start<typeof convertDocument>(CONVERT_DOCUMENT_WORKFLOW_TYPE, {
    workflowId: `ingest-${document.documentId}`,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    taskQueue: CONVERT_DOCUMENT_TASK_QUEUE,
    args: [{ tenantId: document.tenantId, documentId: document.documentId }],
    priority: tenantFairness(document.tenantId),
  });
}
