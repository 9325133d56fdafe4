import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { CONVERT_DOCUMENT_FAILURES, type DocumentRef } from './convert-document-api.js';
import { failureMessageOf, failureTypeOf } from './failures.js';

const convert = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [CONVERT_DOCUMENT_FAILURES.DocumentMissing] },
});
const embed = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '60 seconds', retry: { maximumAttempts: 5 } });
const bookkeeping = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: BOOKKEEPING_RETRY });

/**
 * One uploaded document, on the `ingest` task queue: converted to Markdown, chunked and embedded, read
 * for entities when its knowledge base extracts a graph, and then `ready`.
 * A step that gives up fails the document with the reason, never leaving it half done.
 */
export async function convertDocument(ref: DocumentRef): Promise<'ready' | 'failed'> {
  try {
    if (!(await convert.convertDocumentSource(ref))) return 'failed';
    await embed.embedDocumentChunks(ref);
  } catch (err) {
    if (failureTypeOf(err) === CONVERT_DOCUMENT_FAILURES.DocumentMissing) return 'failed';
    await bookkeeping.failDocument({ ...ref, error: `processing failed: ${failureMessageOf(err)}` });
    return 'failed';
  }
  // A graph that cannot be extracted is noted on the document, not fatal: its chunks are searchable.
  let problem: string | null = null;
  try {
    await embed.extractGraph(ref);
  } catch (err) {
    problem = `graph extraction failed: ${failureMessageOf(err)}`;
  }
  await bookkeeping.markDocumentReady({ ...ref, problem });
  return 'ready';
}
