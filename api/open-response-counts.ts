import type Koa from 'koa';

/** A limit on the responses open at once under one subject (a workspace, a visitor, a browser session). */
export interface Bound {
  subject: string;
  limit: number;
}

/**
 * Responses open at once per subject, each counted until its response closes, which it does once
 * whether it ended, failed or lost its client. What the API's event streams (api/stream-slots.ts) and
 * the console's (api/console/request.ts) are bounded by.
 */
export class OpenResponseCounts {
  private readonly open = new Map<string, number>();

  /**
   * Counts the response under every bound, or under none when one is full: that bound is answered. A
   * client that hung up while the request was handled is not counted: its response has closed already
   * and will not say so again.
   */
  hold<B extends Bound>(koa: Koa.Context, bounds: B[]): B | undefined {
    const { res } = koa;
    if (res.destroyed || koa.req.socket.destroyed) return undefined;
    const full = bounds.find(({ subject, limit }) => this.count(subject) >= limit);
    if (full) return full;
    for (const { subject } of bounds) this.open.set(subject, this.count(subject) + 1);
    res.once('close', () => {
      for (const { subject } of bounds) {
        const left = this.count(subject) - 1;
        if (left > 0) this.open.set(subject, left);
        else this.open.delete(subject);
      }
    });
    return undefined;
  }

  count(subject: string): number {
    return this.open.get(subject) ?? 0;
  }
}
