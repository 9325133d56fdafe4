import type Koa from 'koa';
import type { Db } from '../db/database.js';
import { isDatabaseUnreachable } from '../db/errors.js';
import { readRunEvents } from '../db/run-events.js';
import { findRunStatus, isTerminal, TERMINAL_EVENTS } from '../db/runs.js';
import type { RunEvent } from '../db/schema.js';
import { withTenant } from '../db/tenant-transaction.js';
import type { EventHub } from './event-hub.js';
import { LiveStream } from './live-stream.js';
import type { Reply } from './operation.js';

/** How often a stream looks at the log even without a notification. */
const POLL_EVERY_MS = 1000;
/**
 * How long an open stream rides out a database that does not answer (a Postgres restart or failover)
 * before it ends. Ending at once would send every client to reconnect while the database is still down,
 * and a browser's EventSource gives up for good on the error answer it would get then.
 */
const DATABASE_GRACE_MS = 60_000;

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** An append-only event log a stream follows: events numbered 1, 2, 3… per id. */
export interface EventLog<E extends LoggedEvent> {
  hub: EventHub;
  read(afterSeq: number): Promise<E[]>;
  /** Whether the stream has nothing more to say after this event. */
  endsAfter(event: E): boolean | Promise<boolean>;
  /**
   * Whether nothing more will ever be appended (ended, or gone): a client that reconnects after the last
   * event (EventSource does so by itself) gets an empty stream that ends, not one that waits forever.
   */
  isOver(): Promise<boolean>;
  /** The SSE frame of an event; by default `id`, `event` and the event as JSON (the API's streams). */
  frame?(event: E): string | Promise<string>;
}

export interface LoggedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * Streams a run's event log as Server-Sent Events from after `afterSeq`: every frame carries `id: <seq>`,
 * so a client that reconnects with Last-Event-ID gets exactly the rest. The stream ends after a terminal
 * event, or after `run.paused` while the run is still paused (answering resumes it; a new stream follows).
 */
export function streamRunEvents(
  koa: Koa.Context,
  deps: { db: Db; events: EventHub },
  tenantId: string,
  runId: string,
  afterSeq: number,
  toFrame?: (event: RunEvent) => string | Promise<string>,
): Reply {
  return streamEventLog(koa, runId, afterSeq, {
    hub: deps.events,
    frame: toFrame,
    read: (after) => readRunEvents(deps.db, tenantId, runId, after),
    endsAfter: async (event: RunEvent) => TERMINAL_EVENTS.has(event.type) || (event.type === 'run.paused' && (await isPaused(deps.db, tenantId, runId))),
    isOver: async () => {
      const status = await withTenant(deps.db, tenantId, (tx) => findRunStatus(tx, tenantId, runId));
      return status === undefined || isTerminal(status);
    },
  });
}

/** Streams any event log the same way: what runs and experiments share. */
export function streamEventLog<E extends LoggedEvent>(koa: Koa.Context, id: string, afterSeq: number, log: EventLog<E>): Reply {
  const live = new LiveStream(koa, (notify) => log.hub.subscribe(id, notify), POLL_EVERY_MS);
  const stream = live.body;

  // Each look at the log is retried while the database is away (pings keep the connection open), until
  // DATABASE_GRACE_MS without an answer; the stream then ends and the client resumes with Last-Event-ID.
  let failingSince: number | undefined;
  const retrying = async <T>(look: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        const result = await look();
        failingSince = undefined;
        return result;
      } catch (err) {
        failingSince ??= Date.now();
        if (live.closed || !isDatabaseUnreachable(err) || Date.now() - failingSince > DATABASE_GRACE_MS) throw err;
        await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
      }
    }
  };

  (async () => {
    let last = afterSeq;
    while (!live.closed) {
      live.takeNews();
      const events = await retrying(() => log.read(last));
      const toFrame = log.frame ?? frame;
      for (const event of events) {
        stream.write(await retrying(async () => toFrame(event)));
        last = event.seq;
      }
      const final = events.at(-1);
      if (final && (await retrying(async () => log.endsAfter(final)))) break;
      if (events.length === 0) {
        if (await retrying(() => log.isOver())) {
          // The end is written with its last event in one transaction: one more read has everything.
          for (const event of await retrying(() => log.read(last))) stream.write(await retrying(async () => (log.frame ?? frame)(event)));
          break;
        }
        await live.waitForNews();
      }
    }
  })()
    .catch((err) => console.error(`[sse] stream of ${id} failed:`, err))
    .finally(() => live.end());

  return { status: 200, body: stream, headers: SSE_HEADERS };
}

/** An event as the API's streams send it. */
export function frame(event: LoggedEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify({ seq: event.seq, type: event.type, ...event.data, created_at: event.created_at.toISOString() })}\n\n`;
}

async function isPaused(db: Db, tenantId: string, runId: string): Promise<boolean> {
  return (await withTenant(db, tenantId, (tx) => findRunStatus(tx, tenantId, runId))) === 'paused';
}
