import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

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

/**
 * One table's rows in their waiting state (`waiting`, a select of one table with an `id` and a
 * `created_at`) narrowed to the page `query` names, with `too_late` and `overdue`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's select query
export function strandedPage<O>(waiting: SelectQueryBuilder<any, any, O>, query: StrandedQuery) {
  return waiting
    .select([createdBefore(query.tooLateMs).as('too_late'), createdBefore(query.overdueMs).as('overdue')])
    .where(sql.ref('created_at'), '<', msAgo(query.waitedMs))
    .where(sql.ref('id'), '>', query.afterId)
    .orderBy(sql.ref('id'))
    .limit(query.limit);
}

/** The moment `ms` milliseconds before the database's now. */
function msAgo(ms: number): RawBuilder<Date> {
  return sql<Date>`now() - make_interval(secs => ${ms / 1000})`;
}

/** `created_at` before `ms` ago, as a boolean column. */
function createdBefore(ms: number): RawBuilder<boolean> {
  return sql<boolean>`created_at < ${msAgo(ms)}`;
}
