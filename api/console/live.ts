import { performance } from 'node:perf_hooks';
import type Koa from 'koa';
import { isDatabaseUnreachable } from '../../db/errors.js';
import type { Reply } from '../operation.js';
import { LiveStream } from '../live-stream.js';
import { SSE_HEADERS } from '../sse.js';

/**
 * An event stream of snapshots, for views over more than one log (the inbox: every paused run of the
 * person's workspaces; an experiment page: its leaderboard and matrix). Each wake-up (a notification, or
 * the poll interval when none comes) recomputes the view; `next` answers what to send, if anything has
 * changed, and whether that was the last word. Notifications coming in a burst are taken together.
 */
export interface SnapshotSource {
  /** Calls `wake` when something the view shows may have changed; answers the unsubscribe. */
  subscribe(wake: () => void): () => void;
  /** `since`: when this wake-up began (performance.now()), for sharing with the streams that woke with it. */
  next(since: number): Promise<{ data?: unknown; final?: boolean }>;
  /** How long a burst of notifications is gathered before the view is recomputed once; 250 ms by default. */
  gatherMs?: number;
}

const POLL_EVERY_MS = 3000;
const GATHER_MS = 250;
/**
 * Bytes a slow client may have waiting before the stream stops computing snapshots for it: only the
 * latest one matters, and `next` sends the difference from what was last written, so nothing is lost.
 */
const BACKLOG_LIMIT = 256 * 1024;
const DATABASE_GRACE_MS = 60_000;

export function streamSnapshots(koa: Koa.Context, source: SnapshotSource): Reply {
  const live = new LiveStream(koa, (notify) => source.subscribe(notify), POLL_EVERY_MS);
  const stream = live.body;

  (async () => {
    // A browser reconnects by itself after a second when the stream ends.
    stream.write('retry: 1000\n\n');
    let failingSince: number | undefined;
    while (!live.closed) {
      live.takeNews();
      const since = performance.now();
      if (stream.writableLength > BACKLOG_LIMIT) {
        await live.waitForNews();
        continue;
      }
      let result: Awaited<ReturnType<SnapshotSource['next']>>;
      try {
        result = await source.next(since);
        failingSince = undefined;
      } catch (err) {
        failingSince ??= Date.now();
        if (!isDatabaseUnreachable(err) || Date.now() - failingSince > DATABASE_GRACE_MS) throw err;
        await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
        continue;
      }
      if (result.data !== undefined) stream.write(`data: ${JSON.stringify(result.data)}\n\n`);
      if (result.final) break;
      await live.waitForNews();
      if (!live.closed) await new Promise((resolve) => setTimeout(resolve, source.gatherMs ?? GATHER_MS));
    }
  })()
    .catch((err) => console.error('[console] snapshot stream failed:', err))
    .finally(() => live.end());

  return { status: 200, body: stream, headers: SSE_HEADERS };
}
