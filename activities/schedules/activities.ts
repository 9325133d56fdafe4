import type { ScheduledRunInput } from '../../workflows/scheduled-run-api.js';
import type { ActivityDeps } from '../deps.js';
import { startScheduledRun } from './firing.js';

/** The `scheduledRun` workflow's step (workflows/scheduled-run-api.ts). */
export function scheduleActivities({ db, temporal }: ActivityDeps) {
  return {
    startScheduledRun: (input: ScheduledRunInput & { firingId: string }) => startScheduledRun(db, temporal, input),
  };
}
