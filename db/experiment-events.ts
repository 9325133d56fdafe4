import { sql } from 'kysely';
import type { Db } from './database.js';
import type { ExperimentEvent } from './schema.js';
import { withTenant, type TenantTx } from './tenant-transaction.js';

/** The Postgres channel every append notifies, with the experiment id as payload. */
export const EXPERIMENT_EVENTS_CHANNEL = 'experiment_events';

export type ExperimentEventType = 'experiment.started' | 'cell.started' | 'cell.completed' | 'cell.failed' | 'experiment.completed' | 'experiment.cancelled' | 'experiment.failed';

/** The events after which an experiment's stream has nothing more to say. */
export const EXPERIMENT_TERMINAL_EVENTS: ReadonlySet<string> = new Set<ExperimentEventType>(['experiment.completed', 'experiment.cancelled', 'experiment.failed']);

export interface NewExperimentEvent {
  type: ExperimentEventType;
  data: Record<string, unknown>;
  /** Makes the append idempotent: an event whose key is already in the log is skipped (activity retries). */
  dedupeKey: string;
}

/**
 * Appends events to an experiment's log, numbered without gaps, as db/run-events.ts does for runs: the
 * experiment's row is locked while the numbers are taken; listeners are notified on commit.
 */
export async function appendExperimentEvents(tx: TenantTx, tenantId: string, experimentId: string, events: NewExperimentEvent[]): Promise<void> {
  if (events.length === 0) return;
  const seen = new Set(
    (
      await tx
        .selectFrom('experiment_events')
        .select('dedupe_key')
        .where('experiment_id', '=', experimentId)
        .where('dedupe_key', 'in', events.map((e) => e.dedupeKey))
        .execute()
    ).map((r) => r.dedupe_key),
  );
  const fresh = events.filter((e) => !seen.has(e.dedupeKey));
  if (fresh.length === 0) return;
  const { last_event_seq: last } = await tx
    .updateTable('experiments')
    .set((eb) => ({ last_event_seq: eb('last_event_seq', '+', fresh.length) }))
    .where('id', '=', experimentId)
    .returning('last_event_seq')
    .executeTakeFirstOrThrow();
  const first = last - fresh.length + 1;
  await tx
    .insertInto('experiment_events')
    .values(
      fresh.map((event, i) => ({
        experiment_id: experimentId,
        seq: first + i,
        tenant_id: tenantId,
        type: event.type,
        data: JSON.stringify(event.data),
        dedupe_key: event.dedupeKey,
      })),
    )
    .execute();
  await sql`select pg_notify(${EXPERIMENT_EVENTS_CHANNEL}, ${experimentId})`.execute(tx);
}

/** The experiment's events after `afterSeq`, oldest first. */
export async function readExperimentEvents(db: Db, tenantId: string, experimentId: string, afterSeq: number, limit = 500): Promise<ExperimentEvent[]> {
  return withTenant(db, tenantId, (tx) =>
    tx
      .selectFrom('experiment_events')
      .selectAll()
      .where('experiment_id', '=', experimentId)
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute(),
  );
}
