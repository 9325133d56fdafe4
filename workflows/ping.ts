import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { checkDatabase } = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds' });

/**
 * Proves the whole path works: a workflow started through the Temporal server, picked up by our
 * worker on the given task queue, calling an activity that reaches the database.
 */
export async function ping(message: string): Promise<{ echo: string; database: boolean }> {
  return { echo: message, database: await checkDatabase() };
}
