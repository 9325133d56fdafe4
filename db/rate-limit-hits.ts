import { sql, type CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import { tenantStatements } from './tenant-statement.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `rate_limit_hits` table: timestamped rows per (key, bucket), read two ways. A sliding window
 * counts the hits of its last N seconds (api/rate-limit.ts); a lease bucket keeps one row per thing in
 * flight until it is released or grows too old (api/replay-slots.ts). Each taker serializes on a
 * transaction-scoped advisory lock of its own subject, so concurrent takers cannot all count the same
 * free place; the lock is a statement of its own so the count after it (whose snapshot is taken when
 * it starts) sees every hit committed before the lock was granted.
 */

export interface SlidingWindow {
  /** What is counted, e.g. `runs`; each key has its own window per bucket. */
  bucket: string;
  limit: number;
  windowSeconds: number;
}

export interface WindowCount {
  /** Hits in the window before this one (this one was taken only when it is under the limit). */
  used: number;
  /** The oldest hit still in the window, null when there is none. */
  oldest: Date | null;
  /** The database's clock, which the window is measured by. */
  now: Date;
}

/** Takes a hit for `keyId` when the window holds fewer than its limit, and forgets the hits it has left behind. */
export async function takeWindowHit(tx: TenantTx, tenantId: string, keyId: string, window: SlidingWindow): Promise<WindowCount> {
  await lockSubject(tx, `${window.bucket}:${keyId}`);
  return (await tx.executeQuery(windowHitStatement(tx, tenantId, keyId, window))).rows[0]!;
}

/**
 * The same in a transaction of its own, the lock and the hit sent together: one round trip where a
 * transaction of its own was four (db/tenant-statement.ts), on the way to every run's first event.
 */
export async function takeWindowHitNow(db: Db, tenantId: string, keyId: string, window: SlidingWindow): Promise<WindowCount> {
  const [count] = await tenantStatements(db, tenantId, (scope) => [lockStatement(scope, `${window.bucket}:${keyId}`), windowHitStatement(scope, tenantId, keyId, window)]);
  return count!;
}

function windowHitStatement(scope: TenantScoped, tenantId: string, keyId: string, window: SlidingWindow): CompiledQuery<WindowCount> {
  // Delete, count and insert in one statement where there were three, as each round trip delays a run's
  // first event (docs/performance.md). Its parts share one snapshot: the count sees the expired rows
  // too, hence its own window condition.
  const windowStart = sql<Date>`now() - make_interval(secs => ${window.windowSeconds})`;
  return sql<WindowCount>`
    with expired as (
      delete from rate_limit_hits where key_id = ${keyId} and bucket = ${window.bucket} and at <= ${windowStart}
    ),
    live as (
      select count(*)::int as used, min(at) as oldest from rate_limit_hits
      where key_id = ${keyId} and bucket = ${window.bucket} and at > ${windowStart}
    ),
    taken as (
      insert into rate_limit_hits (tenant_id, key_id, bucket) select ${tenantId}, ${keyId}, ${window.bucket} from live where used < ${window.limit}
    )
    select used, oldest, now() as now from live
  `.compile(scope);
}

/**
 * Takes lease `leaseId` in the tenant's `bucket` when fewer than `max` are held, answering whether it
 * did. A lease older than `leaseSeconds` no longer counts (and is deleted), so a holder that died
 * without releasing does not keep its place.
 */
export async function takeLease(tx: TenantTx, tenantId: string, bucket: string, leaseId: string, max: number, leaseSeconds: number): Promise<boolean> {
  await lockSubject(tx, `${bucket}:${tenantId}`);
  await tx
    .deleteFrom('rate_limit_hits')
    .where('tenant_id', '=', tenantId)
    .where('bucket', '=', bucket)
    .where('at', '<=', sql<Date>`now() - make_interval(secs => ${leaseSeconds})`)
    .execute();
  const { count } = await tx
    .selectFrom('rate_limit_hits')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('bucket', '=', bucket)
    .executeTakeFirstOrThrow();
  if (Number(count) >= max) return false;
  await tx.insertInto('rate_limit_hits').values({ tenant_id: tenantId, key_id: leaseId, bucket }).execute();
  return true;
}

export async function releaseLease(tx: TenantTx, tenantId: string, bucket: string, leaseId: string): Promise<void> {
  await tx.deleteFrom('rate_limit_hits').where('tenant_id', '=', tenantId).where('bucket', '=', bucket).where('key_id', '=', leaseId).execute();
}

async function lockSubject(tx: TenantTx, subject: string): Promise<void> {
  await tx.executeQuery(lockStatement(tx, subject));
}

function lockStatement(scope: TenantScoped, subject: string): CompiledQuery<unknown> {
  return sql`select pg_advisory_xact_lock(hashtextextended(${subject}, 0))`.compile(scope);
}
