import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import { integerSetting } from '../db/integer-settings.js';

/** `: ping` comments keep idle streams open through proxies; SSE_PING_INTERVAL_MS overrides the 15 s. */
function pingIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('SSE_PING_INTERVAL_MS', env) ?? 15_000;
}

/** Streams of this process: started so far, and open now (not yet ended); for tests and diagnostics. */
export const liveStreams = { started: 0, open: 0 };

/**
 * What every Server-Sent Events stream of the API and the console shares: the response body, its
 * keep-alive pings, the client's disconnect, and a wait for the next notification that falls back to a
 * poll (a notification can be missed: the listener reconnects, another process wrote). A stream's loop
 * calls `takeNews` before it looks, then `waitForNews` when it found nothing: a notification that came
 * while it looked is not lost.
 */
export class LiveStream {
  readonly body = new PassThrough();
  closed = false;
  private notified = false;
  private wake: (() => void) | undefined;
  private readonly ping: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private readonly close = () => {
    this.closed = true;
    this.wake?.();
  };

  constructor(koa: Koa.Context, subscribe: (notify: () => void) => () => void, private readonly pollMs: number) {
    koa.req.socket.setTimeout(0);
    koa.req.socket.setNoDelay(true);
    this.unsubscribe = subscribe(() => {
      this.notified = true;
      this.wake?.();
    });
    this.ping = setInterval(() => this.body.write(': ping\n\n'), pingIntervalMs());
    koa.req.once('close', this.close);
    // A client that hung up while the handler looked things up: its request closed before this stream
    // listened, and will not say so again. Such a stream used to follow its run, unread, until it ended.
    if (koa.req.socket.destroyed) this.close();
    liveStreams.started++;
    liveStreams.open++;
  }

  takeNews(): void {
    this.notified = false;
  }

  waitForNews(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.notified || this.closed) return resolve();
      const timer = setTimeout(resolve, this.pollMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  end(): void {
    liveStreams.open--;
    clearInterval(this.ping);
    this.unsubscribe();
    this.body.end();
  }
}
