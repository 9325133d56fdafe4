import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { REEMBED_START, type ReembedVectorsInput } from './reembed-vectors-api.js';

const { reembedVectorsBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  // Every batch is worth finishing, however long the database or the embedder is away.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Walks `memories` and then `chunks`, giving every vector made by other weights one made by
 * `input.weights` (activities/embedding/reembed.ts); searches skip such vectors until then. Walks again
 * while a pass re-embedded anything: processes not yet upgraded may have written old vectors behind it.
 * Answers how many rows it re-embedded.
 */
export async function reembedVectors(input: ReembedVectorsInput): Promise<number> {
  const batchSize = input.batchSize ?? 32;
  const batchesPerRun = input.batchesPerRun ?? 200;
  let cursor = input.cursor ?? REEMBED_START;
  let reembedded = input.reembeddedBefore ?? 0;
  let thisPass = input.reembeddedThisPass ?? 0;
  for (let batch = 0; batch < batchesPerRun; batch++) {
    const result = await reembedVectorsBatch({ weights: input.weights, cursor, limit: batchSize });
    reembedded += result.reembedded;
    thisPass += result.reembedded;
    if (result.next) {
      cursor = result.next;
    } else if (thisPass === 0) {
      return reembedded;
    } else {
      cursor = REEMBED_START;
      thisPass = 0;
    }
  }
  return continueAsNew<typeof reembedVectors>({ ...input, cursor, reembeddedBefore: reembedded, reembeddedThisPass: thisPass });
}
