import type { Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import type { StrandedQuery } from '../../db/stranded-query.js';

/**
 * One kind of work the platform records in Postgres and then hands to Temporal by starting a workflow.
 * A start must be refused as already started (WorkflowExecutionAlreadyStartedError) while Temporal holds
 * a workflow of that id, so that asking again, from any number of processes, never runs anything twice.
 */
export interface StrandedWorkKind {
  /** Plural, for logs: `runs`. */
  name: string;
  /** Records still in their waiting state, as `query` says (db/stranded-query.ts). */
  list(db: Db, query: StrandedQuery): Promise<StrandedRecord[]>;
}

export interface StrandedRecord {
  id: string;
  workflowId: string;
  /** Waited longer than the sweep starts work (sweep.ts): too late to start. */
  tooLate: boolean;
  /** Waited longer than the sweep waits for its workflow (sweep.ts): to be given up unless one is open. */
  overdue: boolean;
  start(temporal: Client): Promise<unknown>;
  /** Ends the record, still in its waiting state, with the reason, as its workflow would have ended it failing; false when it had moved on. */
  giveUp(deps: { db: Db; temporal: Client }, reason: string): Promise<boolean>;
}
