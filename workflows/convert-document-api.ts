/** The document workflow's outside interface, shared by the workflow and the API. */
export const CONVERT_DOCUMENT_WORKFLOW = 'convertDocument';
export const INGEST_TASK_QUEUE = 'ingest';
