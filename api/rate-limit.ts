import { sql } from 'kysely';
import type { TenantTx } from '../db/tenant-transaction.js';
import { ApiError } from './errors.js';

export interface RateLimit {
  /** What is counted, e.g. `runs`. */
  bucket: string;
  limit: number;
  windowSeconds: number;
}

/** 60 run requests per 60 seconds per API key (the spec's Limits). */
export const RUN_RATE_LIMIT: RateLimit = { bucket: 'runs', limit: 60, windowSeconds: 60 };

/**
 * Counts one request of `keyId` against a sliding window kept in Postgres, so the limit holds across
 * every API process. Over the limit it throws 429 with Retry-After (seconds until the oldest counted
 * request leaves the window); otherwise it answers the RateLimit-* headers for the response.
 */
export async function takeRateLimitToken(tx: TenantTx, tenantId: string, keyId: string, limit: RateLimit): Promise<Record<string, string>> {
  // One counter per key at a time: concurrent requests of the same key queue here instead of all passing.
  // A statement of its own, so that the count below (whose snapshot is taken when it starts) reads after it.
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${limit.bucket}:${keyId}`}, 0))`.execute(tx);
  // The expired hits deleted, the live ones counted and this request's taken if under the limit: one
  // statement where there were three, as each round trip delays a run's first event (docs/performance.md).
  // Its parts share one snapshot: the count sees the expired rows too, hence its own window condition.
  const windowStart = sql<Date>`now() - make_interval(secs => ${limit.windowSeconds})`;
  const { rows } = await sql<{ count: number; oldest: Date | null; now: Date }>`
    with expired as (
      delete from rate_limit_hits where key_id = ${keyId} and bucket = ${limit.bucket} and at <= ${windowStart}
    ),
    live as (
      select count(*)::int as count, min(at) as oldest from rate_limit_hits
      where key_id = ${keyId} and bucket = ${limit.bucket} and at > ${windowStart}
    ),
    taken as (
      insert into rate_limit_hits (tenant_id, key_id, bucket) select ${tenantId}, ${keyId}, ${limit.bucket} from live where count < ${limit.limit}
    )
    select count, oldest, now() as now from live
  `.execute(tx);
  const { count: used, oldest, now } = rows[0]!;
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
