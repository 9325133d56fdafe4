import { TASK_QUEUES } from './task-queues.js';

/**
 * The document workflow's contract, shared by the workflow, its activities and the API that starts it
 * (`client.workflow.start<typeof convertDocument>(CONVERT_DOCUMENT_WORKFLOW_TYPE, …)`).
 */
export const CONVERT_DOCUMENT_WORKFLOW_TYPE = 'convertDocument';
export const CONVERT_DOCUMENT_TASK_QUEUE = TASK_QUEUES.ingest;

export interface DocumentRef {
  tenantId: string;
  documentId: string;
}

/** The ApplicationFailure types the workflow's activities end with; neither is retryable. */
export const CONVERT_DOCUMENT_FAILURES = {
  /** The document's row is gone (deleted while queued): nothing to convert, nothing to fail. */
  DocumentMissing: 'DocumentMissing',
  /** The graph extraction model cannot work (unknown provider, no API key); noted on the document. */
  ModelConfiguration: 'ModelConfiguration',
} as const;
