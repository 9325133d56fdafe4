import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { oauthClock } from './clock.js';

/** A sliding-window limit on anonymous endpoints (registration, sign-in), kept in Postgres for every API process. */
export interface AttemptLimit {
  bucket: string;
  limit: number;
  windowSeconds: number;
}

/** Per client address: enough for every MCP client on a machine, too few to fill the database. */
export const REGISTRATIONS_PER_ADDRESS: AttemptLimit = { bucket: 'register:address', limit: 60, windowSeconds: 3600 };
/** All registrations together, whatever address they come from. */
export const REGISTRATIONS_OVERALL: AttemptLimit = { bucket: 'register:all', limit: 2000, windowSeconds: 3600 };
/** Failed sign-ins per e-mail and per address, against password guessing. */
export const FAILED_SIGN_INS_PER_EMAIL: AttemptLimit = { bucket: 'sign-in:email', limit: 10, windowSeconds: 15 * 60 };
export const FAILED_SIGN_INS_PER_ADDRESS: AttemptLimit = { bucket: 'sign-in:address', limit: 100, windowSeconds: 15 * 60 };

/** One limit and whom it counts (an address, an e-mail, `*` for everyone). */
export interface Attempt {
  limit: AttemptLimit;
  subject: string;
}

/**
 * Counts one attempt of `subject` when it is under the limit and answers 0; over the limit it counts
 * nothing and answers the seconds until it may try again. One transaction under an advisory lock, so
 * concurrent attempts cannot all slip under the limit.
 */
export async function takeAttempt(db: Db, limit: AttemptLimit, subject: string): Promise<number> {
  return (await takeAttempts(db, [{ limit, subject }])).wait;
}

/**
 * Counts one attempt against every limit at once, or — when any of them is reached — none, answering
 * the longest wait. The locks are taken in the given order, so callers that list their limits in the
 * same order cannot deadlock. `at` is when the attempts were counted, for refundAttempts.
 */
export async function takeAttempts(db: Db, attempts: Attempt[]): Promise<{ wait: number; at: Date }> {
  return db.transaction().execute(async (tx) => {
    for (const { limit, subject } of attempts) {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`oauth:${limit.bucket}:${subject}`}, 0))`.execute(tx);
    }
    let wait = 0;
    for (const { limit, subject } of attempts) wait = Math.max(wait, await retryAfter(tx, limit, subject));
    const at = oauthClock.now();
    if (wait === 0) for (const { limit, subject } of attempts) await recordAttempt(tx, limit, subject, at);
    return { wait, at };
  });
}

/** Takes back attempts counted by takeAttempts at `at` (one each), e.g. when a sign-in turned out right. */
export async function refundAttempts(db: Db, attempts: Attempt[], at: Date): Promise<void> {
  for (const { limit, subject } of attempts) {
    // The table has no key; ctid picks one row of possibly several counted in the same millisecond.
    await sql`delete from oauth_rate_hits where ctid = (
      select ctid from oauth_rate_hits where bucket = ${limit.bucket} and subject = ${subject} and at = ${at} limit 1)`.execute(db);
  }
}

/** Seconds until `subject` may try again, or 0 when it is under the limit. Counts nothing. */
async function retryAfter(db: Db, limit: AttemptLimit, subject: string): Promise<number> {
  const now = oauthClock.now();
  const row = await db
    .selectFrom('oauth_rate_hits')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('at').as('oldest')])
    .where('bucket', '=', limit.bucket)
    .where('subject', '=', subject)
    .where('at', '>', windowStart(limit, now))
    .executeTakeFirstOrThrow();
  if (Number(row.count) < limit.limit || !row.oldest) return 0;
  return Math.max(1, Math.ceil((new Date(row.oldest).getTime() + limit.windowSeconds * 1000 - now.getTime()) / 1000));
}

/** Counts one attempt of `subject`, and forgets its attempts that have left the window. */
async function recordAttempt(db: Db, limit: AttemptLimit, subject: string, now = oauthClock.now()): Promise<void> {
  await db.insertInto('oauth_rate_hits').values({ bucket: limit.bucket, subject, at: now }).execute();
  await db
    .deleteFrom('oauth_rate_hits')
    .where('bucket', '=', limit.bucket)
    .where('subject', '=', subject)
    .where('at', '<=', windowStart(limit, now))
    .execute();
}

function windowStart(limit: AttemptLimit, now: Date): Date {
  return new Date(now.getTime() - limit.windowSeconds * 1000);
}
