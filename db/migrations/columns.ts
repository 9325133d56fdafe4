import { sql, type ColumnBuilderCallback, type CreateTableBuilder } from 'kysely';

/*
 * Column definitions the migrations share. An applied migration must keep producing the same schema, so
 * each of these is exactly what the migrations spelled out before they shared it.
 */

export const notNull: ColumnBuilderCallback = (c) => c.notNull();

/** Not null, set to the time of the insert unless given. */
export const defaultNow: ColumnBuilderCallback = (c) => c.notNull().defaultTo(sql`now()`);

/** A required reference to a row of `table`, deleted with that row. */
export function ownedBy(table: string): ColumnBuilderCallback {
  return (c) => c.notNull().references(`${table}.id`).onDelete('cascade');
}

/** `created_at` and `updated_at`, both set on insert; the repositories move `updated_at` on each change. */
export function timestamps<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('created_at', 'timestamptz', defaultNow).addColumn('updated_at', 'timestamptz', defaultNow);
}
