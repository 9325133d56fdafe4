import type Koa from 'koa';
import type { Db } from '../db/database.js';
import { isDatabaseUnreachable } from '../db/errors.js';
import { readRunEvents } from '../db/run-events.js';
import { findRunStatus, isTerminal, TERMINAL_EVENTS } from '../db/runs.js';
import type { RunEvent } from '../db/schema.js';
import { readAsTenant } from '../db/tenant-reads.js';
import type { EventHub } from './event-hub.js';
import { followLog, type FeedSubscription, type LoggedEvent, type SharedLog } from './log-feed.js';
import { LiveStream } from './live-stream.js';
import type { Reply } from './operation.js';
import { isoTimestamp } from './iso-timestamp.js';

export type { LoggedEvent, SharedLog } from './log-feed.js';

/** How often a stream wakes without news when nothing needs it sooner (its `access` check does). */
const IDLE_WAKE_MS = 60_000;
/** How often a stream's own look is tried again while the database does not answer. */
const DATABASE_RETRY_MS = 1000;
/** Timers are rounded to the millisecond: a wake-up after `everyMs` may find Date.now() a little short of it. */
const TIMER_SLACK_MS = 20;
/** How long a stream's own look (its access, a frame that reads) rides out a database that does not answer. */
const DATABASE_GRACE_MS = 60_000;
/**
 * Bytes a stream may have waiting for a client that does not read (or reads slower than events come)
 * before the stream ends: one stalled client must not hold memory without bound nor slow the others.
 * The client loses nothing: it reconnects with Last-Event-ID (EventSource does so by itself) and gets
 * exactly the rest from the log.
 */
export const SLOW_CLIENT_LIMIT = 256 * 1024;
/** How long a client may stay over SLOW_CLIENT_LIMIT before its stream ends. */
export const SLOW_CLIENT_GRACE_MS = 10_000;

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** What one stream adds to the log it shares with the others that follow it. */
export interface StreamOptions<E extends LoggedEvent> {
  /** The SSE frame of an event ('' sends nothing); by default `id`, `event` and the event as JSON (the API's streams). */
  frame?(event: E): string | Promise<string>;
  /** Whether the stream may go on, asked again while it lasts: false ends it. */
  access?: StreamAccess;
}

/** A stream's access check: `stands` is asked before a batch or on a wake-up, once `everyMs` have passed since it last was. */
export interface StreamAccess {
  stands(): Promise<boolean>;
  everyMs: number;
}

/** A run's event log, as every stream of it (the API's, the console's) shares it. */
export function runLog(deps: { db: Db; events: EventHub }, tenantId: string, runId: string): SharedLog<RunEvent> {
  return {
    hub: deps.events,
    tenantId,
    id: runId,
    read: (after, limit) => readRunEvents(deps.db, tenantId, runId, after, limit),
    // After `run.paused` while the run is still paused: answering resumes it, and a new stream follows.
    endsAfter: async (event) => TERMINAL_EVENTS.has(event.type) || (event.type === 'run.paused' && (await runStatus(deps.db, tenantId, runId)) === 'paused'),
    isOver: async () => {
      const status = await runStatus(deps.db, tenantId, runId);
      return status === undefined || isTerminal(status);
    },
  };
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
  options: StreamOptions<RunEvent> = {},
): Reply {
  return streamEventLog(koa, afterSeq, runLog(deps, tenantId, runId), options);
}

/**
 * Streams any event log the same way: what runs and experiments share. The log is read by the one feed
 * of its (tenant, id) in this process (api/log-feed.ts); this stream only frames and writes its share.
 */
export function streamEventLog<E extends LoggedEvent>(koa: Koa.Context, afterSeq: number, log: SharedLog<E>, options: StreamOptions<E> = {}): Reply {
  let subscription!: FeedSubscription<E>;
  const live = new LiveStream(
    koa,
    (notify) => {
      subscription = followLog(log, afterSeq, notify);
      return () => subscription.cancel();
    },
    // The feed's notifications are in-process and cannot be missed: only an access check needs a timer.
    options.access?.everyMs ?? IDLE_WAKE_MS,
  );
  const stream = live.body;
  const toFrame = options.frame ?? frame;

  // A look of the stream's own is retried while the database is away (pings keep the connection open),
  // until DATABASE_GRACE_MS without an answer; the stream then ends and the client resumes with Last-Event-ID.
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
        await new Promise((resolve) => setTimeout(resolve, DATABASE_RETRY_MS));
      }
    }
  };

  let accessCheckedAt = Date.now();
  const accessStands = async (access: StreamAccess): Promise<boolean> => {
    if (Date.now() - accessCheckedAt < access.everyMs - TIMER_SLACK_MS) return true;
    const stands = await retrying(() => access.stands());
    accessCheckedAt = Date.now();
    return stands;
  };

  (async () => {
    while (!live.closed) {
      live.takeNews();
      if (options.access && !(await accessStands(options.access))) break;
      const events = subscription.take();
      for (const event of events) {
        const text = await retrying(async () => toFrame(event));
        if (text) stream.write(text);
      }
      if (subscription.failure !== undefined) throw subscription.failure;
      if (subscription.ended) {
        // What the feed delivered while the last frames were written comes first.
        const rest = subscription.take();
        for (const event of rest) {
          const text = await retrying(async () => toFrame(event));
          if (text) stream.write(text);
        }
        break;
      }
      if (!(await readDownToLimit(stream, () => live.closed))) {
        console.warn(`[sse] stream of ${log.id} ended: the client stayed more than ${SLOW_CLIENT_LIMIT} bytes behind for ${SLOW_CLIENT_GRACE_MS / 1000} s (it resumes with Last-Event-ID)`);
        break;
      }
      if (events.length === 0) await live.waitForNews();
    }
  })()
    .catch((err) => console.error(`[sse] stream of ${log.id} failed:`, err))
    .finally(() => live.end());

  return { status: 200, body: stream, headers: SSE_HEADERS };
}

/**
 * Waits while the client has more than SLOW_CLIENT_LIMIT bytes unread, up to SLOW_CLIENT_GRACE_MS: a long
 * backlog sent at once is over the limit until a reader at normal speed takes it (and the hosted chat
 * page and MCP do not resume a cut stream), so only a client that stays behind is let go. False if it did.
 */
async function readDownToLimit(stream: NodeJS.ReadWriteStream & { writableLength: number; readableLength: number }, closed: () => boolean): Promise<boolean> {
  const deadline = Date.now() + SLOW_CLIENT_GRACE_MS;
  while (stream.writableLength + stream.readableLength > SLOW_CLIENT_LIMIT) {
    if (closed() || Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** An event as the API's streams send it. */
export function frame(event: LoggedEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify({ seq: event.seq, type: event.type, ...event.data, created_at: isoTimestamp(event.created_at) })}\n\n`;
}

function runStatus(db: Db, tenantId: string, runId: string) {
  return readAsTenant(db, tenantId, (reader) => findRunStatus(reader, tenantId, runId));
}
