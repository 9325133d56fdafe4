import type Koa from 'koa';

/**
 * TRUST_PROXY: how many reverse proxies stand in front of the API. Each appends the address it got
 * the request from to X-Forwarded-For, so the client's address is the one that many entries from the
 * right; everything left of it is whatever the client sent, and trusting it (the leftmost entry) would
 * let anyone pick their own address and slip past per-address limits.
 *
 * `false`, `0` or unset: no proxy, the socket's address is the client's. `true` is one proxy.
 */
export function proxyHopsFromEnv(value: string | undefined): number {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '' || text === 'false' || text === '0') return 0;
  if (text === 'true') return 1;
  if (/^[1-9][0-9]?$/.test(text)) return Number(text);
  throw new Error(`TRUST_PROXY must be true, false or the number of proxies in front of the API (1 to 99), got '${value}'`);
}

/** Makes `ctx.ip` (and the X-Forwarded-Proto/Host that Koa then reads) come from `hops` trusted proxies. */
export function trustProxies(app: Koa, hops: number): void {
  app.proxy = hops > 0;
  // Koa keeps the last `maxIpsCount` entries and answers the first of them: the address `hops` away.
  app.maxIpsCount = hops;
}
