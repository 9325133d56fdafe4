import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PingResult } from './ping-api.js';

// A health check: a few quick tries, then the failure is the answer.
const { checkDatabase } = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/**
 * Proves the whole path works: a workflow started through the Temporal server, picked up by our
 * worker on the given task queue, calling an activity that reaches the database.
 */
export async function ping(message: string): Promise<PingResult> {
  return { echo: message, database: await checkDatabase() };
}
