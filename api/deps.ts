import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../db/database.js';
import type { RunEventHub } from './run-event-hub.js';

/** What handlers reach beyond the request. */
export interface AppDeps {
  db: Db;
  temporal: Client;
  /** Wakes run event streams when events are appended. */
  events: RunEventHub;
  /** The workflow code, bundled on first use, for replaying stored histories. */
  workflowBundle: () => Promise<WorkflowBundle>;
  publicUrl: string;
}
