import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import { integerSetting } from '../db/integer-settings.js';

/** `: ping` comments keep idle streams open through proxies; SSE_PING_INTERVAL_MS overrides the 15 s. */
function pingIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('SSE_PING_INTERVAL_MS', env) ?? 15_000;
}

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
  private readonly socket: Koa.Context['req']['socket'];
  private readonly close = () => {
    this.closed = true;
    this.wake?.();
  };

  constructor(koa: Koa.Context, subscribe: (notify: () => void) => () => void, private readonly pollMs: number) {
    this.socket = koa.req.socket;
    this.socket.setTimeout(0);
    this.socket.setNoDelay(true);
    this.unsubscribe = subscribe(() => {
      this.notified = true;
      this.wake?.();
    });
    this.ping = setInterval(() => this.body.write(': ping\n\n'), pingIntervalMs());
    // The client gone, however it shows: its request closes; a request pipelined behind another on a
    // keep-alive connection that closed has only the connection's close (its response, queued, never
    // opened). Without the second such a stream followed its run until the run ended, unread.
    koa.req.once('close', this.close);
    if (this.socket.destroyed) this.close();
    else this.socket.once('close', this.close);
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
    // The connection may serve more requests after this one: it keeps no listener of a stream that ended.
    this.socket.off('close', this.close);
    clearInterval(this.ping);
    this.unsubscribe();
    this.body.end();
  }
}
