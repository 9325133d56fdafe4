import { TASK_QUEUES } from './task-queues.js';

/**
 * The contract of a schedule's firing, shared by the workflow, its activity and the Temporal Schedule
 * that starts it (activities/schedules/temporal-schedule.ts). Each firing is a `scheduledRun` workflow
 * (workflow id: the schedule's id, to which Temporal appends the firing time) that records a run of the
 * schedule's agent and runs it as an `agentRun` child whose workflow id is the run id. It lasts as long
 * as that run, because Temporal judges the schedule's overlap policy on the firing workflows.
 */

export const SCHEDULED_RUN_WORKFLOW_TYPE = 'scheduledRun';
export const SCHEDULED_RUN_TASK_QUEUE = TASK_QUEUES.runs;

/** What the Temporal Schedule passes each firing: the rest (agent, input, thread) is read from the schedule's row when it fires. */
export interface ScheduledRunInput {
  tenantId: string;
  scheduleId: string;
}

export type ScheduledRunResult =
  /** The run it made and how that run ended. */
  | { runId: string; status: 'completed' | 'failed' | 'cancelled' }
  /** The schedule's row is gone (its agent was deleted): no run, and the Temporal Schedule is deleted too. */
  | { runId: null; status: 'schedule_deleted' };

/** A firing that could not make its run (the agent has no published version any more): the firing workflow fails with this type. */
export const SCHEDULED_RUN_NOT_STARTED = 'ScheduledRunNotStarted';
