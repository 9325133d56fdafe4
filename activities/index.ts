import { isDatabaseReachable, type Db } from '../db/database.js';

/** What activities reach: handed in by the worker process, never imported globals. */
export interface ActivityDeps {
  db: Db;
}

export function createActivities(deps: ActivityDeps) {
  return {
    /** True when the worker's database answers. */
    async checkDatabase(): Promise<boolean> {
      return isDatabaseReachable(deps.db);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
