import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DocumentRef } from '../activities/knowledge/ingest.js';

const convert = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['DocumentMissing'] },
});
const embed = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '60 seconds', retry: { maximumAttempts: 5 } });
const bookkeeping = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds' });

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
    const cause = innermost(err);
    if (cause instanceof ApplicationFailure && cause.type === 'DocumentMissing') return 'failed';
    await bookkeeping.failDocument({ ...ref, error: `processing failed: ${cause instanceof Error ? cause.message : String(cause)}` });
    return 'failed';
  }
  // A graph that cannot be extracted is noted on the document, not fatal: its chunks are searchable.
  let problem: string | null = null;
  try {
    await embed.extractGraph(ref);
  } catch (err) {
    const cause = innermost(err);
    problem = `graph extraction failed: ${cause instanceof Error ? cause.message : String(cause)}`;
  }
  await bookkeeping.markDocumentReady({ ...ref, problem });
  return 'ready';
}

function innermost(err: unknown): unknown {
  let cause = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  return cause;
}
