import { sql, type CompiledQuery, type Selectable } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';
import { preparedQuery, type PreparedQuery } from './prepared-query.js';
import { readAsTenant } from './tenant-reads.js';
import { tenantStatements } from './tenant-statement.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * An event log of runs or of experiments (the tables of createEventLogTable in
 * db/migrations/tables.ts): each run's or experiment's events numbered 1, 2, 3… without gaps, the
 * numbers handed out by its row's `last_event_seq`; each append NOTIFYs `channel` with the parent's id.
 */
export type EventLogTable = 'run_events' | 'experiment_events';

export interface EventLog<Table extends EventLogTable = EventLogTable> {
  table: Table;
  parentTable: 'runs' | 'experiments';
  parentColumn: 'run_id' | 'experiment_id';
  channel: string;
}

export interface NewLogEvent {
  type: string;
  data: Record<string, unknown>;
  /** Makes the append idempotent: an event whose key is already in the log, or earlier in its batch, is skipped (activity retries). */
  dedupeKey?: string;
}

/**
 * Appends events to one run's or experiment's log in order and returns the numbers they got, none for
 * the events a dedupe key skipped. Its row is locked while the numbers are taken, so concurrent
 * appenders queue rather than collide. Listeners are notified on commit.
 *
 * One statement, whatever the number of events: the dedupe check, the counter, the insert and the
 * NOTIFY were four round trips, a quarter of a run's statements (docs/performance.md). A retry racing
 * its first attempt with the same key can pass the check (it reads the statement's snapshot, taken
 * before the row lock), as before: the log's unique index on the key then refuses the later insert,
 * and that write's next attempt skips the event.
 */
export async function appendEvents(tx: TenantTx, log: EventLog, tenantId: string, parentId: string, events: NewLogEvent[]): Promise<number[]> {
  if (events.length === 0) return [];
  return appendedSeqs(log, parentId, (await tx.executeQuery(appendStatement(tx, log, tenantId, parentId, events))).rows);
}

/** The same, as a transaction of its own: one round trip on Postgres (db/tenant-statement.ts). */
export async function appendEventsNow(db: Db, log: EventLog, tenantId: string, parentId: string, events: NewLogEvent[]): Promise<number[]> {
  const [first, ...rest] = events;
  if (!first) return [];
  return appendEventsAfter(db, log, tenantId, parentId, [first, ...rest], () => []);
}

/**
 * The same in one round trip, after `before`'s statements, which write what the events tell of (a step
 * and its `tool_call.started`): all in one transaction (db/tenant-statement.ts).
 */
export async function appendEventsAfter(
  db: Db,
  log: EventLog,
  tenantId: string,
  parentId: string,
  events: [NewLogEvent, ...NewLogEvent[]],
  before: (scope: TenantScoped) => CompiledQuery[],
): Promise<number[]> {
  return appendedSeqs(log, parentId, await tenantStatements(db, tenantId, (scope) => [...before(scope), appendStatement(scope, log, tenantId, parentId, events)]));
}

interface AppendedRow {
  fresh: number;
  seqs: number[];
}

/** The append's one statement, of at least one event. */
function appendStatement(scope: TenantScoped, log: EventLog, tenantId: string, parentId: string, events: NewLogEvent[]): CompiledQuery<AppendedRow> {
  // A key twice in one batch: the first is the event, the second a duplicate of it (the log's unique index would refuse both).
  const firsts = events.filter((event, i) => !event.dedupeKey || events.findIndex((other) => other.dedupeKey === event.dedupeKey) === i);
  const batch = JSON.stringify(firsts.map((event, i) => ({ i, type: event.type, data: event.data, dedupe_key: event.dedupeKey ?? null })));
  const table = sql.table(log.table);
  const parentColumn = sql.ref(log.parentColumn);
  return sql<AppendedRow>`
    with fresh as (
      select e.i, e.type, e.data, e.dedupe_key, row_number() over (order by e.i) as n, count(*) over () as total
      from jsonb_to_recordset(${batch}::jsonb) as e(i int, type text, data jsonb, dedupe_key text)
      where e.dedupe_key is null
         or not exists (
           select 1 from ${table} logged
           where logged.${parentColumn} = ${parentId} and logged.tenant_id = ${tenantId} and logged.dedupe_key = e.dedupe_key
         )
    ),
    counter as (
      update ${sql.table(log.parentTable)} set last_event_seq = last_event_seq + (select count(*) from fresh)
      where id = ${parentId} and tenant_id = ${tenantId} and exists (select 1 from fresh)
      returning last_event_seq
    ),
    appended as (
      insert into ${table} (${parentColumn}, seq, tenant_id, type, data, dedupe_key)
      select ${parentId}, counter.last_event_seq - fresh.total + fresh.n, ${tenantId}, fresh.type, fresh.data, fresh.dedupe_key
      from fresh cross join counter
      returning seq
    ),
    notified as (select pg_notify(${log.channel}, ${parentId}) from appended limit 1)
    -- A CTE that is not data-modifying runs only if referenced: hence "notified" below.
    select (select count(*) from fresh)::int as fresh,
           array(select seq from appended order by seq) as seqs,
           (select count(*) from notified) as notified
  `.compile(scope);
}

function appendedSeqs(log: EventLog, parentId: string, rows: AppendedRow[]): number[] {
  const { fresh, seqs } = rows[0]!;
  if (seqs.length !== fresh) throw new Error(`no ${log.parentTable} row ${parentId} to append ${fresh} events to`);
  return seqs;
}

/**
 * Reads of each log since the process started: what the live streams' "one read per notification,
 * whatever the number of subscribers" is checked and benchmarked by.
 */
export const eventLogReads: Record<EventLogTable, number> = { run_events: 0, experiment_events: 0 };

interface LogReadValues {
  parentId: string;
  tenantId: string;
  afterSeq: number;
  limit: number;
}

/**
 * Each log's read, built and compiled once (db/prepared-query.ts): every live feed runs it on every
 * notification, ~8 times in a run. Kysely's build and compile were ~25 µs of a one-event read's ~113 µs
 * of CPU (docs/performance.md).
 */
const logReads = new WeakMap<EventLog, PreparedQuery<LogReadValues, unknown>>();

/** A log's read, whose rows are its table's (the one cast: the map holds every log's read). */
function logRead<Table extends EventLogTable>(log: EventLog<Table>): PreparedQuery<LogReadValues, Selectable<Database[Table]>> {
  let read = logReads.get(log);
  if (!read) {
    const { table, parentColumn }: EventLog = log;
    read = preparedQuery((reader, values: LogReadValues) =>
      reader
        .selectFrom(table)
        .selectAll()
        .where(parentColumn, '=', values.parentId)
        .where('tenant_id', '=', values.tenantId)
        .where('seq', '>', values.afterSeq)
        .orderBy('seq')
        .limit(values.limit),
    );
    logReads.set(log, read);
  }
  return read as PreparedQuery<LogReadValues, Selectable<Database[Table]>>;
}

/** One run's or experiment's events after `afterSeq`, oldest first: rows of `log.table`. */
export async function readEvents<Table extends EventLogTable>(
  db: Db,
  log: EventLog<Table>,
  tenantId: string,
  parentId: string,
  afterSeq: number,
  limit: number,
): Promise<Selectable<Database[Table]>[]> {
  eventLogReads[log.table]++;
  return readAsTenant(db, tenantId, (reader) => logRead(log).execute(reader, { parentId, tenantId, afterSeq, limit }));
}
