import type { Db } from '../db/database.js';
import { takeWindowHit, takeWindowHitNow, type SlidingWindow, type WindowCount } from '../db/rate-limit-hits.js';
import type { TenantTx } from '../db/tenant-transaction.js';
import { ApiError } from './errors.js';

/** A limit of `limit` requests per `windowSeconds`, counted per key in its `bucket` (e.g. `runs`). */
export type RateLimit = SlidingWindow;

/** 60 run requests per 60 seconds per API key (the spec's Limits). */
export const RUN_RATE_LIMIT: RateLimit = { bucket: 'runs', limit: 60, windowSeconds: 60 };

/**
 * Counts one request of `keyId` against a sliding window kept in Postgres, so the limit holds across
 * every API process. Over the limit it throws 429 with Retry-After (seconds until the oldest counted
 * request leaves the window); otherwise it answers the RateLimit-* headers for the response.
 */
export async function takeRateLimitToken(tx: TenantTx, tenantId: string, keyId: string, limit: RateLimit): Promise<Record<string, string>> {
  return answerWindowHit(limit, await takeWindowHit(tx, tenantId, keyId, limit));
}

/** The same in a transaction of its own (one round trip on Postgres), so that refused requests count too. */
export async function takeRateLimitTokenNow(db: Db, tenantId: string, keyId: string, limit: RateLimit): Promise<Record<string, string>> {
  return answerWindowHit(limit, await takeWindowHitNow(db, tenantId, keyId, limit));
}

function answerWindowHit(limit: RateLimit, { used, oldest, now }: WindowCount): Record<string, string> {
  const resetSeconds = oldest ? Math.max(1, Math.ceil((oldest.getTime() + limit.windowSeconds * 1000 - now.getTime()) / 1000)) : limit.windowSeconds;
  if (used >= limit.limit) {
    throw new ApiError('rate_limited', `rate limit of ${limit.limit} requests per ${limit.windowSeconds} s exceeded; retry in ${resetSeconds} s`, {}, {
      'Retry-After': String(resetSeconds),
      ...headers(limit, 0, resetSeconds),
    });
  }
  return headers(limit, limit.limit - used - 1, resetSeconds);
}

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), in their widely used split form. */
function headers(limit: RateLimit, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit.limit),
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(resetSeconds),
    'RateLimit-Policy': `${limit.limit};w=${limit.windowSeconds}`,
  };
}
