import { sql } from 'kysely';
import type { Db } from './database.js';
import { readAsTenant } from './tenant-reads.js';
import type { TenantTx } from './tenant-transaction.js';

/**
 * An event log of runs or of experiments (the tables of createEventLogTable in
 * db/migrations/tables.ts): each run's or experiment's events numbered 1, 2, 3… without gaps, the
 * numbers handed out by its row's `last_event_seq`; each append NOTIFYs `channel` with the parent's id.
 */
export interface EventLog {
  table: 'run_events' | 'experiment_events';
  parentTable: 'runs' | 'experiments';
  parentColumn: 'run_id' | 'experiment_id';
  channel: string;
}

export interface NewLogEvent {
  type: string;
  data: Record<string, unknown>;
  /** Makes the append idempotent: an event whose key is already in the log is skipped (activity retries). */
  dedupeKey?: string;
}

/**
 * Appends events to one run's or experiment's log in order and returns the numbers they got. Its row
 * is locked while the numbers are taken, so concurrent appenders queue rather than collide. Listeners
 * are notified on commit.
 */
export async function appendEvents(tx: TenantTx, log: EventLog, tenantId: string, parentId: string, events: NewLogEvent[]): Promise<number[]> {
  const keys = events.flatMap((e) => (e.dedupeKey ? [e.dedupeKey] : []));
  const seen = keys.length
    ? new Set(
        (
          await tx.selectFrom(log.table).select('dedupe_key').where(log.parentColumn, '=', parentId).where('dedupe_key', 'in', keys).execute()
        ).map((r) => r.dedupe_key),
      )
    : new Set<string | null>();
  const fresh = events.filter((e) => !e.dedupeKey || !seen.has(e.dedupeKey));
  if (fresh.length === 0) return [];

  const { last_event_seq: last } = await tx
    .updateTable(log.parentTable)
    .set((eb) => ({ last_event_seq: eb('last_event_seq', '+', fresh.length) }))
    .where('id', '=', parentId)
    .returning('last_event_seq')
    .executeTakeFirstOrThrow();
  const first = last - fresh.length + 1;
  await tx
    .insertInto(log.table)
    .values(
      fresh.map((event, i) => ({
        [log.parentColumn]: parentId,
        seq: first + i,
        tenant_id: tenantId,
        type: event.type,
        data: JSON.stringify(event.data),
        dedupe_key: event.dedupeKey ?? null,
      })),
    )
    .execute();
  await sql`select pg_notify(${log.channel}, ${parentId})`.execute(tx);
  return fresh.map((_, i) => first + i);
}

/**
 * Reads of each log since the process started: what the live streams' "one read per notification,
 * whatever the number of subscribers" is checked and benchmarked by.
 */
export const eventLogReads: Record<EventLog['table'], number> = { run_events: 0, experiment_events: 0 };

/** One run's or experiment's events after `afterSeq`, oldest first. */
export async function readEvents(db: Db, log: EventLog, tenantId: string, parentId: string, afterSeq: number, limit: number) {
  eventLogReads[log.table]++;
  return readAsTenant(db, tenantId, (reader) =>
    reader
      .selectFrom(log.table)
      .selectAll()
      .where(log.parentColumn, '=', parentId)
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute(),
  );
}
