import { sql, type SelectQueryBuilder } from 'kysely';
import { preparedQuery } from './prepared-query.js';
import type { TenantScoped } from './tenant-transaction.js';

/** Which page of a list: at most `limit` rows, after the row whose id is `cursor`. */
export interface PageQuery {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** The id to pass as `cursor` for the next page; null on the last one. */
  nextCursor: string | null;
}

/** Reads one page of a list for `values` (see preparedPage). */
export type PageReader<Values, Row> = (reader: TenantScoped, values: Values, page: PageQuery) => Promise<Page<Row>>;

/**
 * A list read a page at a time in id order (ids sort by creation), oldest first or, with `order` 'desc',
 * newest first (runs, calls, deliveries): the rows after `cursor` in that order, and the cursor of the
 * next page, found by fetching one row more than asked for. `build` selects the list's rows for
 * `values`; it is prepared once per shape (db/prepared-query.ts: values are opaque there, and an
 * undefined one is absent), as every list request runs it.
 */
export function preparedPage<Values extends object, Row extends { id: string }>(
  idColumn: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's select query
  build: (db: TenantScoped, values: Values) => SelectQueryBuilder<any, any, Row>,
  order: 'asc' | 'desc' = 'asc',
): PageReader<Values, Row> {
  const query = preparedQuery((db, values: Values & { pageLimit: number; pageCursor: string | undefined }) => {
    let q = build(db, values).orderBy(sql.ref(idColumn), order).limit(values.pageLimit);
    if (values.pageCursor !== undefined) q = q.where(sql.ref(idColumn), order === 'asc' ? '>' : '<', values.pageCursor);
    return q;
  });
  return async (reader, values, { limit, cursor }) => {
    if ('pageLimit' in values || 'pageCursor' in values) throw new Error('preparedPage: pageLimit and pageCursor are the page\'s own values');
    // An empty cursor is no cursor, as the lists always took it.
    return page(await query.execute(reader, { ...values, pageLimit: limit + 1, pageCursor: cursor || undefined }), limit);
  };
}

/** Takes `limit + 1` rows and answers the page plus the cursor of the next one. */
export function page<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}
