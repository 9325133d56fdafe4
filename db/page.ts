import { sql, type SelectQueryBuilder } from 'kysely';

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

/**
 * One page of a list in id order (ids sort by creation): the rows after `cursor`, and the cursor of the
 * next page, found by fetching one row more than asked for.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's select query
export async function fetchPage<O extends { id: string }>(query: SelectQueryBuilder<any, any, O>, idColumn: string, { limit, cursor }: PageQuery): Promise<Page<O>> {
  let q = query.orderBy(sql.ref(idColumn)).limit(limit + 1);
  if (cursor) q = q.where(sql.ref(idColumn), '>', cursor);
  return page(await q.execute(), limit);
}

/** Takes `limit + 1` rows and answers the page plus the cursor of the next one. */
export function page<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}
