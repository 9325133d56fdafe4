import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RunRef } from '../activities/runs/types.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';

const { storeRunHistory } = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', heartbeatTimeout: '10 seconds', retry: BOOKKEEPING_RETRY });

/** Started by a run from before the history queue as it ends (and left running when it closes): stores the run's whole history in Postgres. */
export async function archiveRunHistory(ref: RunRef): Promise<number> {
  return storeRunHistory(ref);
}
