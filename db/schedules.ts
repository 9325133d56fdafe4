import { newId } from './ids.js';
import type { Page, PageQuery } from './page.js';
import { fetchPage } from './page.js';
import type { Schedule, ScheduleOverlap } from './schema.js';
import type { TenantTx } from './tenant-transaction.js';

/**
 * The `schedules` table: the mirror of each schedule's Temporal Schedule (same id), which is what fires.
 * The API writes a row and its Temporal Schedule in one transaction (api/routes/schedules.ts).
 */

export interface ScheduleDefinition {
  agentId: string;
  input: string;
  threadId: string | null;
  cron: string | null;
  every: string | null;
  timeZone: string;
  overlap: ScheduleOverlap;
  jitter: string | null;
  description: string | null;
}

function columns(definition: ScheduleDefinition) {
  return {
    agent_id: definition.agentId,
    input: definition.input,
    thread_id: definition.threadId,
    cron: definition.cron,
    every: definition.every,
    time_zone: definition.timeZone,
    overlap: definition.overlap,
    jitter: definition.jitter,
    description: definition.description,
  };
}

/** The definition a row holds, the shape writes take. */
export function scheduleDefinition(row: Schedule): ScheduleDefinition {
  return {
    agentId: row.agent_id,
    input: row.input,
    threadId: row.thread_id,
    cron: row.cron,
    every: row.every,
    timeZone: row.time_zone,
    overlap: row.overlap,
    jitter: row.jitter,
    description: row.description,
  };
}

export async function insertSchedule(tx: TenantTx, tenantId: string, definition: ScheduleDefinition, paused: boolean): Promise<Schedule> {
  return tx
    .insertInto('schedules')
    .values({ id: newId('sch'), tenant_id: tenantId, ...columns(definition), paused })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSchedule(tx: TenantTx, tenantId: string, scheduleId: string): Promise<Schedule | undefined> {
  return tx.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** `select … for update`: writes to one schedule (and its Temporal Schedule) go one at a time. */
export async function lockSchedule(tx: TenantTx, tenantId: string, scheduleId: string): Promise<Schedule | undefined> {
  return tx.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
}

/** A page of the workspace's schedules (of one agent when given), oldest first. */
export async function listSchedulesPage(tx: TenantTx, tenantId: string, filter: { agentId?: string }, query: PageQuery): Promise<Page<Schedule>> {
  let q = tx.selectFrom('schedules').selectAll().where('tenant_id', '=', tenantId);
  if (filter.agentId) q = q.where('agent_id', '=', filter.agentId);
  return fetchPage(q, 'id', query);
}

export async function updateSchedule(tx: TenantTx, tenantId: string, scheduleId: string, definition: ScheduleDefinition): Promise<Schedule> {
  return tx
    .updateTable('schedules')
    .set({ ...columns(definition), updated_at: new Date() })
    .where('id', '=', scheduleId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setSchedulePaused(tx: TenantTx, tenantId: string, scheduleId: string, paused: boolean): Promise<Schedule> {
  return tx
    .updateTable('schedules')
    .set({ paused, updated_at: new Date() })
    .where('id', '=', scheduleId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteScheduleById(tx: TenantTx, tenantId: string, scheduleId: string): Promise<void> {
  await tx.deleteFrom('schedules').where('id', '=', scheduleId).where('tenant_id', '=', tenantId).execute();
}
