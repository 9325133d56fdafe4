import { ActivityFailure, continueAsNew, log, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { REEMBED_START, REEMBED_WAIT_FOR_WORKER_MS, reembedBatchTaskQueue, type ReembedVectorsInput } from './reembed-vectors-api.js';

// Every batch is worth finishing, however long the database or the embedder is away.
const RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/**
 * Walks `memories` and then `chunks`, giving every vector made by other weights one made by
 * `input.weights` (activities/embedding/reembed.ts); searches skip such vectors until then. Walks again
 * while a pass re-embedded anything: processes not yet upgraded may have written old vectors behind it.
 * Answers how many rows it re-embedded (so far, when no worker with the weights came: see the input).
 */
export async function reembedVectors(input: ReembedVectorsInput): Promise<number> {
  const { reembedVectorsBatch } = proxyActivities<Activities>(
    input.version === undefined
      ? { startToCloseTimeout: '5 minutes', retry: RETRY }
      : {
          taskQueue: reembedBatchTaskQueue(input.weights),
          startToCloseTimeout: '5 minutes',
          scheduleToStartTimeout: input.waitForWorkerMs ?? REEMBED_WAIT_FOR_WORKER_MS,
          retry: RETRY,
        },
  );
  const batchSize = input.batchSize ?? 32;
  const batchesPerRun = input.batchesPerRun ?? 200;
  let cursor = input.cursor ?? REEMBED_START;
  let reembedded = input.reembeddedBefore ?? 0;
  let thisPass = input.reembeddedThisPass ?? 0;
  for (let batch = 0; batch < batchesPerRun; batch++) {
    const result = await reembedVectorsBatch({ weights: input.weights, cursor, limit: batchSize }).catch((err: unknown) => {
      if (noWorkerCame(err)) return undefined;
      throw err;
    });
    if (!result) {
      log.warn('no worker with the target weights took a re-embedding batch in time: stopping until one starts', { weights: input.weights, cursor });
      return reembedded;
    }
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

/** Whether a batch failed because it waited out its schedule-to-start timeout (never retried by the server). */
function noWorkerCame(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}
