import { sql, type CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import { appendEvents, appendEventsAfter, appendEventsNow, readEvents, type EventLog, type NewLogEvent } from './event-log.js';
import type { RunEvent } from './schema.js';
import { tenantStatement } from './tenant-statement.js';
import { withTenant, type TenantScoped, type TenantTx } from './tenant-transaction.js';

/** The Postgres channel every append notifies, with the run id as payload. */
export const RUN_EVENTS_CHANNEL = 'run_events';

export type RunEventType =
  | 'run.created'
  | 'run.started'
  | 'message.delta'
  | 'message.completed'
  | 'tool_call.started'
  | 'tool_call.completed'
  | 'guardrail.triggered'
  | 'run.paused'
  | 'run.resumed'
  | 'run.completed'
  | 'run.failed'
  | 'run.cancelled'
  | 'attempt.reset';

export interface NewRunEvent extends NewLogEvent {
  type: RunEventType;
}

const RUN_EVENT_LOG: EventLog<'run_events'> = { table: 'run_events', parentTable: 'runs', parentColumn: 'run_id', channel: RUN_EVENTS_CHANNEL };

/**
 * Appends events to a run's log in order, numbering them 1, 2, 3… without gaps (see appendEvents);
 * returns the numbers they got, none for the events a dedupe key skipped.
 */
export function appendRunEvents(tx: TenantTx, tenantId: string, runId: string, events: NewRunEvent[]): Promise<number[]> {
  return appendEvents(tx, RUN_EVENT_LOG, tenantId, runId, events);
}

/** The same, in a transaction of its own (one round trip on Postgres). */
export function appendRunEventsNow(db: Db, tenantId: string, runId: string, events: NewRunEvent[]): Promise<number[]> {
  return appendEventsNow(db, RUN_EVENT_LOG, tenantId, runId, events);
}

/** The same, after `before`'s statements, in the same round trip and transaction (see appendEventsAfter). */
export function appendRunEventsAfter(db: Db, tenantId: string, runId: string, events: [NewRunEvent, ...NewRunEvent[]], before: (scope: TenantScoped) => CompiledQuery[]): Promise<number[]> {
  return appendEventsAfter(db, RUN_EVENT_LOG, tenantId, runId, events, before);
}

/** The run's events after `afterSeq`, oldest first. */
export function readRunEvents(db: Db, tenantId: string, runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
  return readEvents(db, RUN_EVENT_LOG, tenantId, runId, afterSeq, limit);
}

/** The text of the run's latest model turn that wrote any (what the agent said before it asked). */
export async function lastMessageText(db: Db, tenantId: string, runId: string): Promise<string | undefined> {
  const row = await withTenant(db, tenantId, (tx) =>
    tx
      .selectFrom('run_events')
      .select(sql<string>`data->>'text'`.as('text'))
      .where('run_id', '=', runId)
      .where('tenant_id', '=', tenantId)
      .where('type', '=', 'message.completed')
      .where(sql<boolean>`btrim(coalesce(data->>'text', '')) <> ''`)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst(),
  );
  return row?.text;
}

/** The run's event stored under `dedupeKey`, if any (what an interrupted activity already wrote). */
export function findRunEventByDedupeKey(db: Db, tenantId: string, runId: string, dedupeKey: string): Promise<RunEvent | undefined> {
  return withTenant(db, tenantId, (tx) =>
    tx.selectFrom('run_events').selectAll().where('run_id', '=', runId).where('tenant_id', '=', tenantId).where('dedupe_key', '=', dedupeKey).executeTakeFirst(),
  );
}

/**
 * The last event of model turn `turn` in the run's log: its `message.completed` (stored under
 * `completedKey`) when the turn was recorded, else its latest `message.delta`, else nothing.
 */
export async function findLastTurnEvent(db: Db, tenantId: string, runId: string, turn: number, completedKey: string): Promise<RunEvent | undefined> {
  // Asked before every model turn with local calls: one round trip (db/tenant-statement.ts).
  const [event] = await tenantStatement(db, tenantId, (scope) =>
    scope
      .selectFrom('run_events')
      .selectAll()
      .where('run_id', '=', runId)
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('dedupe_key', '=', completedKey), eb.and([eb('type', '=', 'message.delta'), eb(sql`data->>'turn'`, '=', String(turn))])]))
      .orderBy('seq', 'desc')
      .limit(1)
      .compile(),
  );
  return event;
}
