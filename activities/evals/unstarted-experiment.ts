import type { Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { emitExperimentEnded } from '../webhooks/platform-events.js';
import { finishExperiment } from './experiment-lifecycle.js';

/**
 * Ends an experiment that is still `queued` and that no workflow runs as failed (error code
 * `unavailable`, the reason), its cells skipped, its end event and webhook sent. False (nothing changed)
 * when it had moved on: a workflow that began it meanwhile ends it itself, and one that begins it later
 * finds it ended and stops (activities/evals/experiment-lifecycle.ts).
 */
export async function endUnstartedExperiment(deps: { db: Db; temporal: Client }, experiment: { tenantId: string; experimentId: string }, reason: string): Promise<boolean> {
  const end = { ...experiment, status: 'failed', error: { code: 'unavailable', message: reason } } as const;
  if (!(await finishExperiment(deps.db, end, ['queued']))) return false;
  // As the workflow's finishExperiment activity would: webhooks hear of the end (a Temporal that refused a start may refuse this too).
  await emitExperimentEnded(deps, end).catch(() => {});
  return true;
}
