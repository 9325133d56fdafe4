import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { createQueuedRun, findRunOfFiring } from '../../db/runs.js';
import { findSchedule } from '../../db/schedules.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { ScheduledRunInput } from '../../workflows/scheduled-run-api.js';
import { deleteTemporalSchedule, describeTemporalSchedule } from './temporal-schedule.js';

export type ScheduledRunStart =
  | { kind: 'run'; runId: string; agentId: string }
  /** The run could not be made: the agent has no published version any more. */
  | { kind: 'not_started'; message: string }
  /** The schedule's row is gone, and so (now) is its Temporal Schedule. */
  | { kind: 'schedule_deleted' };

/**
 * A Temporal Schedule younger than this whose row is missing may belong to a create whose transaction has
 * not committed yet (the API creates the Temporal Schedule inside it): the firing retries rather than
 * taking it for an orphan.
 */
const CREATE_GRACE_MS = 5_000;

/**
 * Records the firing's run (`source: "schedule"`, the schedule's agent, input and thread), once: a retry,
 * or a replay, finds the run the firing (its Temporal run id, unique even when Temporal reuses a workflow
 * id) already made. A schedule whose row is gone (deleted
 * with its agent) has its Temporal Schedule deleted, so it stops firing.
 */
export async function startScheduledRun(db: Db, temporal: Client, input: ScheduledRunInput & { firingId: string }): Promise<ScheduledRunStart> {
  const { tenantId, scheduleId, firingId } = input;
  const start = await withTenant(db, tenantId, async (tx): Promise<ScheduledRunStart> => {
    const existing = await findRunOfFiring(tx, tenantId, firingId);
    if (existing) return { kind: 'run', runId: existing.id, agentId: existing.agent_id };
    const schedule = await findSchedule(tx, tenantId, scheduleId);
    if (!schedule) return { kind: 'schedule_deleted' };
    const queued = await createQueuedRun(tx, {
      tenantId,
      agentId: schedule.agent_id,
      input: schedule.input,
      threadId: schedule.thread_id ?? undefined,
      source: 'schedule',
      schedule: { scheduleId, firingId },
    });
    if (queued.queued) return { kind: 'run', runId: queued.runId, agentId: schedule.agent_id };
    return { kind: 'not_started', message: `schedule ${scheduleId} could not start a run of agent ${schedule.agent_id}: ${queued.reason}` };
  });
  if (start.kind !== 'schedule_deleted') return start;

  const described = await describeTemporalSchedule(temporal, scheduleId);
  if (described && Date.now() - described.info.createdAt.getTime() < CREATE_GRACE_MS) {
    throw ApplicationFailure.retryable(`schedule ${scheduleId} has no row yet; its creation may not have committed`);
  }
  if (described) await deleteTemporalSchedule(temporal, scheduleId);
  return start;
}
