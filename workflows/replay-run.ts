import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { REPLAY_RUN_FAILURES, type ReplayRunInput, type ReplayRunResult } from './replay-run-api.js';

const { replayRunHistory } = proxyActivities<Activities>({
  // A long history replays in seconds; this bounds one that never finishes. Two attempts fit in the
  // 5 minutes the API waits (api/routes/runs.ts), so a second try can still answer the request.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 2, nonRetryableErrorTypes: [REPLAY_RUN_FAILURES.HistoryMissing] },
});

/**
 * Replays a finished run's stored history against the workers' current workflow code, on the `replays`
 * task queue, where replays wait their turn instead of crowding out runs.
 */
export async function replayRun(input: ReplayRunInput): Promise<ReplayRunResult> {
  return replayRunHistory(input);
}
