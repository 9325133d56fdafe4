import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from './schema.js';

/**
 * A ref is how a caller names a row of these tables: its id, or its name (unique in the workspace).
 *
 * Precedence, everywhere: **id first, then name**. An id is never reused and never changes, so a ref that
 * is some row's id always reaches that row, even when another row is named like it; a name only counts
 * when no row has that id. The run plan resolves a graph's tool refs the same way.
 */
export type RefTable = 'agents' | 'prompts' | 'skills' | 'guardrails' | 'knowledge_bases' | 'tools' | 'browser_sign_ins';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any shape of select over a ref table (joins, subqueries, a lock)
type RefQuery<O> = SelectQueryBuilder<Database, any, O>;

/**
 * The tenant's row of `table` that `ref` names, read through `query` (which chooses the columns, joins
 * and lock); undefined when none. `table` qualifies the columns, so `query` may join other tables.
 */
export function findByRef<O>(query: RefQuery<O>, table: RefTable, tenantId: string, ref: string): Promise<O | undefined> {
  const id = sql.ref(`${table}.id`);
  return query
    .where(sql.ref(`${table}.tenant_id`), '=', tenantId)
    .where((eb) => eb.or([eb(id, '=', ref), eb(sql.ref(`${table}.name`), '=', ref)]))
    .orderBy(sql`${id} = ${ref}`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The tenant's row of `table` named `name`, by name only: what an upsert by name must find when the name
 * is taken, even when the name looks like another row's id.
 */
export function findByName<O>(query: RefQuery<O>, table: RefTable, tenantId: string, name: string): Promise<O | undefined> {
  return query.where(sql.ref(`${table}.tenant_id`), '=', tenantId).where(sql.ref(`${table}.name`), '=', name).executeTakeFirst();
}

/**
 * Many refs, with the same precedence: each ref that names a row, mapped to that row. One query per
 * REFS_PER_QUERY distinct refs (each takes two parameters, and Postgres takes at most 65 535 a query).
 */
export async function findAllByRef<O extends { id: string; name: string }>(
  query: RefQuery<O>,
  table: RefTable,
  tenantId: string,
  refs: readonly string[],
): Promise<Map<string, O>> {
  const distinct = [...new Set(refs)];
  const byId = new Map<string, O>();
  const byName = new Map<string, O>();
  for (let start = 0; start < distinct.length; start += REFS_PER_QUERY) {
    const chunk = distinct.slice(start, start + REFS_PER_QUERY);
    const rows = await query
      .where(sql.ref(`${table}.tenant_id`), '=', tenantId)
      .where((eb) => eb.or([eb(sql.ref(`${table}.id`), 'in', chunk), eb(sql.ref(`${table}.name`), 'in', chunk)]))
      .execute();
    for (const row of rows) {
      byId.set(row.id, row);
      byName.set(row.name, row);
    }
  }
  const found = new Map<string, O>();
  for (const ref of distinct) {
    const row = byId.get(ref) ?? byName.get(ref);
    if (row) found.set(ref, row);
  }
  return found;
}

const REFS_PER_QUERY = 10_000;
