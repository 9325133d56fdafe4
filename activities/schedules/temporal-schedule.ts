import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import type { Schedule, ScheduleOverlap } from '../../db/schema.js';
import { SCHEDULED_RUN_TASK_QUEUE, SCHEDULED_RUN_WORKFLOW_TYPE, type ScheduledRunInput } from '../../workflows/scheduled-run-api.js';
import type { scheduledRun } from '../../workflows/scheduled-run.js';
import { AgentIdAttribute, TenantIdAttribute } from '../../workflows/search-attributes.js';
import { tenantFairness } from '../tenant-fairness.js';
import { parseDuration } from './spec.js';

/**
 * A schedule's Temporal Schedule, which fires it: the Temporal server keeps the timing (so firings happen
 * while the API is down), the `schedules` row mirrors the definition. Both share the schedule's id.
 */

const OVERLAP: Record<ScheduleOverlap, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/**
 * Firings missed while the Temporal server itself was down are taken when it is back if they are at most
 * this late (Temporal's own default); older ones are skipped rather than fired in a burst.
 */
const CATCHUP_WINDOW = '1 minute';

/**
 * The start action with its priority: the SDK sends an action's `priority` (and describes it back) though
 * its options type (1.24) leaves the field out.
 */
type StartAction = ScheduleOptionsStartWorkflowAction<typeof scheduledRun> & { priority: Priority };

type Definition = Pick<Schedule, 'id' | 'agent_id' | 'cron' | 'every' | 'time_zone' | 'overlap' | 'jitter' | 'paused'>;

/** The Temporal Schedule of a schedule row of `tenantId`. */
export function temporalScheduleOptions(tenantId: string, schedule: Definition): ScheduleOptions<StartAction> {
  const input: ScheduledRunInput = { tenantId, scheduleId: schedule.id };
  return {
    scheduleId: schedule.id,
    spec: {
      ...(schedule.cron !== null ? { cronExpressions: [schedule.cron] } : { intervals: [{ every: parseDuration(schedule.every!)! }] }),
      timezone: schedule.time_zone,
      ...(schedule.jitter !== null && { jitter: parseDuration(schedule.jitter)! }),
    },
    action: {
      type: 'startWorkflow',
      workflowType: SCHEDULED_RUN_WORKFLOW_TYPE,
      taskQueue: SCHEDULED_RUN_TASK_QUEUE,
      // Temporal appends each firing's time: `sch_…-2026-01-01T09:00:00Z`.
      workflowId: schedule.id,
      args: [input],
      // Not RunSource: `RunSource = "schedule"` finds the runs, not the firings that wait on them.
      typedSearchAttributes: [
        { key: TenantIdAttribute, value: tenantId },
        { key: AgentIdAttribute, value: schedule.agent_id },
      ],
      priority: tenantFairness(tenantId),
    },
    policies: { overlap: OVERLAP[schedule.overlap], catchupWindow: CATCHUP_WINDOW },
    typedSearchAttributes: [{ key: TenantIdAttribute, value: tenantId }],
    state: { paused: schedule.paused },
  };
}

export async function createTemporalSchedule(temporal: Client, tenantId: string, schedule: Definition): Promise<void> {
  await temporal.schedule.create(temporalScheduleOptions(tenantId, schedule));
}

/** Replaces the Temporal Schedule's spec, action and policies with the row's; its paused state is left as it is. */
export async function updateTemporalSchedule(temporal: Client, tenantId: string, schedule: Definition): Promise<void> {
  const { spec, action, policies, typedSearchAttributes } = temporalScheduleOptions(tenantId, schedule);
  await temporal.schedule.getHandle(schedule.id).update((current) => ({
    spec,
    action,
    policies,
    typedSearchAttributes,
    state: { paused: current.state.paused, note: current.state.note },
  }));
}

/** Deletes the Temporal Schedule; one that is already gone is fine. Firings already running go on to their end. */
export async function deleteTemporalSchedule(temporal: Client, scheduleId: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(scheduleId).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/**
 * Deletes the Temporal Schedules of schedules whose rows are already gone (their agent was deleted). A
 * failure is only logged: the next firing of such a schedule finds no row and deletes it then.
 */
export async function deleteTemporalSchedulesOfDeletedRows(temporal: Client, scheduleIds: string[]): Promise<void> {
  for (const id of scheduleIds) {
    await deleteTemporalSchedule(temporal, id).catch((err: unknown) => console.error(`[schedules] deleting the Temporal Schedule ${id}:`, err));
  }
}

/**
 * Whether `err` is the Temporal server refusing a schedule's spec. The SDK turns the server's
 * `INVALID_ARGUMENT: Invalid schedule spec: …` into a bare TypeError thrown from its gRPC error handler;
 * any other TypeError (the SDK's own checks of the options, a bug of ours) is not the request's fault.
 */
export function isTemporalSpecRefusal(err: unknown): err is TypeError {
  if (!(err instanceof TypeError) || Object.getPrototypeOf(err) !== TypeError.prototype || err.cause !== undefined) return false;
  const thrower = err.stack?.split('\n').find((line) => line.trimStart().startsWith('at '));
  return thrower !== undefined && /\bScheduleClient\.rethrowGrpcError\b/.test(thrower) && thrower.includes('@temporalio');
}

/** The Temporal Schedule's description, or undefined when Temporal has no such schedule. */
export async function describeTemporalSchedule(temporal: Client, scheduleId: string): Promise<ScheduleDescription | undefined> {
  try {
    return await temporal.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return undefined;
    throw err;
  }
}
