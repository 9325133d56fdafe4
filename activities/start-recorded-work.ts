import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { workflowExists } from './workflow-state.js';

/** The work was recorded but its workflow could not be started; its record now says so (failed, with this message). */
export class WorkNotStartedError extends Error {}

/**
 * Starts the workflow of work just recorded in Postgres (a run, an experiment). When Temporal refuses
 * the start and has no such workflow, `endUnstarted` ends the record with the reason and this throws
 * WorkNotStartedError: the record says what happened rather than waiting with nothing to run it. A start
 * that went through after all (one that timed out on its way back) finds its record ended and stops;
 * if it has already begun the work (`endUnstarted` answers false), nothing is ended.
 */
export async function startRecordedWork(work: {
  temporal: Client;
  workflowId: string;
  /** For the message: `run`, `experiment`. */
  what: string;
  start: () => Promise<unknown>;
  endUnstarted: (message: string) => Promise<boolean>;
}): Promise<void> {
  try {
    await work.start();
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError || (await workflowExists(work.temporal, work.workflowId))) return;
    const message = `the ${work.what}'s workflow could not be started: ${err instanceof Error ? err.message : String(err)}`;
    if (await work.endUnstarted(message)) throw new WorkNotStartedError(message);
  }
}
