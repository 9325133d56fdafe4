import { sql } from 'kysely';
import type { Db } from './database.js';
import type { RunEvent } from './schema.js';
import { withTenant, type TenantTx } from './tenant-transaction.js';

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

export interface NewRunEvent {
  type: RunEventType;
  data: Record<string, unknown>;
  /** Makes the append idempotent: an event with a key already in the log is skipped (activity retries). */
  dedupeKey?: string;
}

/**
 * Appends events to a run's log in order, numbering them 1, 2, 3… without gaps. The run row is locked
 * while sequence numbers are taken, so concurrent appenders queue rather than collide. Listeners are
 * notified on commit.
 */
export async function appendRunEvents(tx: TenantTx, tenantId: string, runId: string, events: NewRunEvent[]): Promise<number[]> {
  const keys = events.flatMap((e) => (e.dedupeKey ? [e.dedupeKey] : []));
  const seen = keys.length
    ? new Set(
        (
          await tx.selectFrom('run_events').select('dedupe_key').where('run_id', '=', runId).where('dedupe_key', 'in', keys).execute()
        ).map((r) => r.dedupe_key),
      )
    : new Set<string | null>();
  const fresh = events.filter((e) => !e.dedupeKey || !seen.has(e.dedupeKey));
  if (fresh.length === 0) return [];

  const { last_event_seq: last } = await tx
    .updateTable('runs')
    .set((eb) => ({ last_event_seq: eb('last_event_seq', '+', fresh.length) }))
    .where('id', '=', runId)
    .returning('last_event_seq')
    .executeTakeFirstOrThrow();
  const first = last - fresh.length + 1;
  await tx
    .insertInto('run_events')
    .values(
      fresh.map((event, i) => ({
        run_id: runId,
        seq: first + i,
        tenant_id: tenantId,
        type: event.type,
        data: JSON.stringify(event.data),
        dedupe_key: event.dedupeKey ?? null,
      })),
    )
    .execute();
  await sql`select pg_notify(${RUN_EVENTS_CHANNEL}, ${runId})`.execute(tx);
  return fresh.map((_, i) => first + i);
}

/** The same, in a transaction of its own. */
export function appendRunEventsNow(db: Db, tenantId: string, runId: string, events: NewRunEvent[]): Promise<number[]> {
  return withTenant(db, tenantId, (tx) => appendRunEvents(tx, tenantId, runId, events));
}

/** The run's events after `afterSeq`, oldest first. */
export async function readRunEvents(db: Db, tenantId: string, runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
  return withTenant(db, tenantId, (tx) =>
    tx
      .selectFrom('run_events')
      .selectAll()
      .where('run_id', '=', runId)
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute(),
  );
}
