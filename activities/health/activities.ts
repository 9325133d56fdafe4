import { isDatabaseReachable } from '../../db/database.js';
import type { ActivityDeps } from '../deps.js';

/** The `ping` workflow's activity: proves a worker on a task queue reaches the database. */
export function healthActivities({ db }: ActivityDeps) {
  return {
    /** True when the worker's database answers. */
    checkDatabase: (): Promise<boolean> => isDatabaseReachable(db),
  };
}
