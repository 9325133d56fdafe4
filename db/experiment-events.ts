import type { Db } from './database.js';
import { appendEvents, readEvents, type EventLog, type NewLogEvent } from './event-log.js';
import type { ExperimentEvent } from './schema.js';
import type { TenantTx } from './tenant-transaction.js';

/** The Postgres channel every append notifies, with the experiment id as payload. */
export const EXPERIMENT_EVENTS_CHANNEL = 'experiment_events';

export type ExperimentEventType = 'experiment.started' | 'cell.started' | 'cell.completed' | 'cell.failed' | 'experiment.completed' | 'experiment.cancelled' | 'experiment.failed';

/** The events after which an experiment's stream has nothing more to say. */
export const EXPERIMENT_TERMINAL_EVENTS: ReadonlySet<string> = new Set<ExperimentEventType>(['experiment.completed', 'experiment.cancelled', 'experiment.failed']);

export interface NewExperimentEvent extends NewLogEvent {
  type: ExperimentEventType;
  dedupeKey: string;
}

const EXPERIMENT_EVENT_LOG: EventLog<'experiment_events'> = { table: 'experiment_events', parentTable: 'experiments', parentColumn: 'experiment_id', channel: EXPERIMENT_EVENTS_CHANNEL };

/** Appends events to an experiment's log, numbered without gaps, as runs' are (see appendEvents). */
export async function appendExperimentEvents(tx: TenantTx, tenantId: string, experimentId: string, events: NewExperimentEvent[]): Promise<void> {
  await appendEvents(tx, EXPERIMENT_EVENT_LOG, tenantId, experimentId, events);
}

/** The experiment's events after `afterSeq`, oldest first. */
export function readExperimentEvents(db: Db, tenantId: string, experimentId: string, afterSeq: number, limit = 500): Promise<ExperimentEvent[]> {
  return readEvents(db, EXPERIMENT_EVENT_LOG, tenantId, experimentId, afterSeq, limit);
}
