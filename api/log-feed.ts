import { isDatabaseUnreachable } from '../db/errors.js';
import type { EventHub } from './event-hub.js';

/** How often a feed looks at its log even without a notification (one may be missed). */
const POLL_EVERY_MS = 1000;
/** Events per read: a subscriber further behind gets its backlog over several reads. */
const PAGE = 500;
/**
 * How long a feed rides out a database that does not answer (a Postgres restart or failover) before its
 * streams end. Ending at once would send every client to reconnect while the database is still down,
 * and a browser's EventSource gives up for good on the error answer it would get then.
 */
const DATABASE_GRACE_MS = 60_000;

export interface LoggedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * One tenant's append-only event log of one run or experiment (events numbered 1, 2, 3…), as every
 * stream of this process that follows it shares it: the same (hub, tenantId, id) must always come with
 * the same reading, as the first stream's is used for all.
 */
export interface SharedLog<E extends LoggedEvent> {
  hub: EventHub;
  tenantId: string;
  id: string;
  read(afterSeq: number, limit: number): Promise<E[]>;
  /** Whether a stream has nothing more to say after this event (the last one read). */
  endsAfter(event: E): boolean | Promise<boolean>;
  /**
   * Whether nothing more will ever be appended (ended, or gone): a client that reconnects after the last
   * event (EventSource does so by itself) gets an empty stream that ends, not one that waits forever.
   */
  isOver(): Promise<boolean>;
}

/** One stream's place in a feed: the events it has not taken yet, and whether the feed ended it. */
export interface FeedSubscription<E extends LoggedEvent> {
  /** The events delivered since the last take, oldest first, each once. */
  take(): E[];
  /** The stream has nothing more to say once it has taken what is left. */
  readonly ended: boolean;
  /** Set when the feed gave up (a failing database past the grace, or another error). */
  readonly failure: unknown;
  cancel(): void;
}

const feeds = new WeakMap<EventHub, Map<string, LogFeed<LoggedEvent>>>();

/**
 * Follows `log` from after `afterSeq`: `notify` is called whenever the subscription has something new
 * (events, its end, a failure). All streams of one (tenant, run or experiment) in this process share one
 * feed, and so one read per notification however many follow it; see LogFeed.
 */
export function followLog<E extends LoggedEvent>(log: SharedLog<E>, afterSeq: number, notify: () => void): FeedSubscription<E> {
  let byKey = feeds.get(log.hub);
  if (!byKey) feeds.set(log.hub, (byKey = new Map()));
  // The tenant is part of the key: a feed only ever reads its own tenant's log (row-level security too).
  const key = `${log.tenantId}\u0000${log.id}`;
  let feed = byKey.get(key) as LogFeed<E> | undefined;
  if (!feed) {
    const created = new LogFeed<E>(log, () => byKey.get(key) === created && byKey.delete(key));
    byKey.set(key, created as unknown as LogFeed<LoggedEvent>);
    feed = created;
  }
  return feed.add(afterSeq, notify);
}

class Subscriber<E extends LoggedEvent> implements FeedSubscription<E> {
  private queue: E[] = [];
  ended = false;
  failure: unknown = undefined;

  constructor(
    /** The last event delivered (or the stream's start): every event after it comes once, in order. */
    public cursor: number,
    private readonly notify: () => void,
    readonly cancel: () => void,
  ) {}

  take(): E[] {
    const taken = this.queue;
    this.queue = [];
    return taken;
  }

  /** The events of a read from after `from`; answers whether the last of them was new to this stream. */
  deliver(events: E[], from: number): boolean {
    // Joined while the read was under way, further back: the next read (its joining asked for one) starts
    // from its cursor; taking these now would skip the events between.
    if (this.cursor < from) return false;
    const last = events.at(-1);
    if (!last || last.seq <= this.cursor) return false;
    for (const event of events) if (event.seq > this.cursor) this.queue.push(event);
    this.cursor = last.seq;
    this.notify();
    return true;
  }

  end(failure?: unknown): void {
    this.ended = true;
    this.failure = failure;
    this.notify();
  }
}

/**
 * The one reader of a (tenant, log) for every stream of this process that follows it. Each wake-up (a
 * notification, a new subscriber, or the poll interval) reads once from the subscriber furthest behind
 * and hands every subscriber the events after its own cursor: N streams of a run cost one query per
 * event, not N. A subscriber joining with an older cursor pulls the next read back to it, and the
 * others skip what they already have, so each gets its backlog once, in order, then the live events
 * without a gap. The events are shared, not copied; each stream writes and frames its own (a slow
 * client is its stream's business: see streamEventLog).
 */
class LogFeed<E extends LoggedEvent> {
  private readonly subscribers = new Set<Subscriber<E>>();
  private notified = true;
  private wake: (() => void) | undefined;
  private readonly unsubscribeHub: () => void;
  private failingSince: number | undefined;
  private running = false;

  constructor(
    private readonly log: SharedLog<E>,
    private readonly forget: () => void,
  ) {
    this.unsubscribeHub = log.hub.subscribe(log.id, () => this.poke());
  }

  add(afterSeq: number, notify: () => void): Subscriber<E> {
    const subscriber: Subscriber<E> = new Subscriber<E>(afterSeq, notify, () => this.remove(subscriber));
    this.subscribers.add(subscriber);
    this.poke();
    // The first subscriber starts the loop; it stops, and the feed is forgotten, when the last one leaves.
    if (this.subscribers.size === 1 && !this.running) {
      this.running = true;
      void this.run();
    }
    return subscriber;
  }

  private remove(subscriber: Subscriber<E>): void {
    if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
    // Nobody follows any more: a new stream gets a new feed, and this one's loop stops.
    this.forget();
    this.poke();
  }

  private endSubscriber(subscriber: Subscriber<E>, failure?: unknown): void {
    subscriber.end(failure);
    this.remove(subscriber);
  }

  private poke(): void {
    this.notified = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    try {
      while (this.subscribers.size > 0) {
        this.notified = false;
        const from = Math.min(...[...this.subscribers].map((s) => s.cursor));
        const events = await this.retrying(() => this.log.read(from, PAGE));
        const last = events.at(-1);
        if (last) {
          const final = await this.retrying(async () => this.log.endsAfter(last));
          for (const subscriber of this.subscribers) {
            // A stream ends after the final event only if it got it (one already past it goes on).
            if (subscriber.deliver(events, from) && final) this.endSubscriber(subscriber);
          }
          if (events.length === PAGE) continue;
        } else if (await this.retrying(() => this.log.isOver())) {
          // The end is written with its last event in one transaction: one more read has everything.
          const to = Math.min(...[...this.subscribers].map((s) => s.cursor));
          const rest = await this.retrying(() => this.log.read(to, PAGE));
          // A full page may not be all of it (a subscriber from far back joined meanwhile): the next round reads on.
          const toTheEnd = rest.length < PAGE;
          for (const subscriber of this.subscribers) {
            if (subscriber.cursor < to) continue; // joined meanwhile, further back: the next round
            subscriber.deliver(rest, to);
            if (toTheEnd) this.endSubscriber(subscriber);
          }
          continue;
        }
        await this.waitForNews();
      }
    } catch (err) {
      for (const subscriber of this.subscribers) this.endSubscriber(subscriber, err);
    } finally {
      this.unsubscribeHub();
      this.forget();
    }
  }

  private waitForNews(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.notified || this.subscribers.size === 0) return resolve();
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, POLL_EVERY_MS);
      this.wake = () => {
        this.wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Retried while the database is away, until DATABASE_GRACE_MS without an answer. */
  private async retrying<T>(look: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const result = await look();
        this.failingSince = undefined;
        return result;
      } catch (err) {
        this.failingSince ??= Date.now();
        if (this.subscribers.size === 0 || !isDatabaseUnreachable(err) || Date.now() - this.failingSince > DATABASE_GRACE_MS) throw err;
        await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
      }
    }
  }
}
