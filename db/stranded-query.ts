import { sql, type RawBuilder } from 'kysely';

/**
 * Which records the stranded-work sweep (workers/stranded-work/) reads of a table: those in its waiting
 * state since longer than `waitedMs`, after the id `afterId` (ids sort by creation), `limit` at a time,
 * each marked `too_late` when it has waited longer than `tooLateMs` and `overdue` when longer than
 * `overdueMs`. Ages are taken on the database's clock, the one that wrote `created_at`.
 */
export interface StrandedQuery {
  waitedMs: number;
  tooLateMs: number;
  overdueMs: number;
  afterId: string;
  limit: number;
}

/** The moment `ms` milliseconds before the database's now. */
export function msAgo(ms: number): RawBuilder<Date> {
  return sql<Date>`now() - make_interval(secs => ${ms / 1000})`;
}

/** `created_at` before `ms` ago, as a boolean column. */
export function createdBefore(ms: number): RawBuilder<boolean> {
  return sql<boolean>`created_at < ${msAgo(ms)}`;
}
