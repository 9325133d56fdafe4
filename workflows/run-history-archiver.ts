import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { archiveQueuedHistories } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // It heartbeats every second: a killed worker's attempt moves to another within seconds.
  heartbeatTimeout: '5 seconds',
  // However long Postgres or the Temporal frontend is away, the queue is still there when they are back.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Attempts (about a minute each) per workflow run before it continues as new. */
const ACTIVITIES_PER_RUN = 60;

/**
 * Copies finished runs' histories into Postgres for replay, from the queue their ends fill
 * (activities/runs/history.ts), for as long as the platform runs.
 */
export async function runHistoryArchiver(): Promise<never> {
  for (let i = 0; i < ACTIVITIES_PER_RUN; i++) await archiveQueuedHistories();
  return continueAsNew<typeof runHistoryArchiver>();
}
