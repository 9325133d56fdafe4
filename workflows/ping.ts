import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PingResult } from './ping-api.js';

const { checkDatabase } = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds' });

/**
 * Proves the whole path works: a workflow started through the Temporal server, picked up by our
 * worker on the given task queue, calling an activity that reaches the database.
 */
export async function ping(message: string): Promise<PingResult> {
  return { echo: message, database: await checkDatabase() };
}
