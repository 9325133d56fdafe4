import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../db/database.js';
import type { Embedder } from '../activities/embedding/index.js';
import type { RunEventHub } from './run-event-hub.js';

/** What handlers reach beyond the request. */
export interface AppDeps {
  db: Db;
  temporal: Client;
  /** Wakes run event streams when events are appended. */
  events: RunEventHub;
  /** The workflow code, bundled on first use, for replaying stored histories. */
  workflowBundle: () => Promise<WorkflowBundle>;
  /** The embedder for memory and knowledge (started on first use). */
  embedder: () => Embedder;
  publicUrl: string;
}
