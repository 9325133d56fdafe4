import { sql } from 'kysely';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Schedule, ScheduleOverlap } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

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

/**
 * The most schedules a workspace may have: each is a Temporal Schedule the shared server keeps and
 * fires, so one workspace must not be able to create them without end.
 */
export const SCHEDULES_PER_TENANT = 100;

/**
 * Whether the workspace is below SCHEDULES_PER_TENANT, judged under a per-workspace lock held to the
 * end of the transaction, so concurrent creates of one workspace count one after the other.
 */
export async function hasRoomForSchedule(tx: TenantTx, tenantId: string): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`schedules:${tenantId}`}, 0))`.execute(tx);
  const { count } = await tx
    .selectFrom('schedules')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(count) < SCHEDULES_PER_TENANT;
}

export async function insertSchedule(tx: TenantTx, tenantId: string, definition: ScheduleDefinition, paused: boolean): Promise<Schedule> {
  return tx
    .insertInto('schedules')
    .values({ id: newId('sch'), tenant_id: tenantId, ...columns(definition), paused })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSchedule(reader: TenantScoped, tenantId: string, scheduleId: string): Promise<Schedule | undefined> {
  return reader.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** `select … for update`: writes to one schedule (and its Temporal Schedule) go one at a time. */
export async function lockSchedule(tx: TenantTx, tenantId: string, scheduleId: string): Promise<Schedule | undefined> {
  return tx.selectFrom('schedules').selectAll().where('id', '=', scheduleId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
}

/** The ids of an agent's schedules (their Temporal Schedules go when the agent is deleted). */
export async function listScheduleIdsOfAgent(tx: TenantTx, tenantId: string, agentId: string): Promise<string[]> {
  const rows = await tx.selectFrom('schedules').select('id').where('tenant_id', '=', tenantId).where('agent_id', '=', agentId).execute();
  return rows.map((row) => row.id);
}

/** A page of the workspace's schedules (of one agent when given), oldest first. */
const schedulesPage = preparedPage('id', (db, { tenantId, agentId }: { tenantId: string; agentId: string | undefined }) => {
  const q = db.selectFrom('schedules').selectAll().where('tenant_id', '=', tenantId);
  return agentId === undefined ? q : q.where('agent_id', '=', agentId);
});

export async function listSchedulesPage(reader: TenantScoped, tenantId: string, filter: { agentId?: string }, query: PageQuery): Promise<Page<Schedule>> {
  return schedulesPage(reader, { tenantId, agentId: filter.agentId || undefined }, query);
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
