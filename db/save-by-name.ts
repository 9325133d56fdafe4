import type { Insertable, Selectable, Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { TenantTx } from './tenant-transaction.js';

/** The tables whose rows a create by name makes (and, for guardrails, a save by name replaces). */
type SavedByName = 'tools' | 'guardrails' | 'browser_sign_ins';

/** What a save sets: every column but the row's identity and timestamps. */
export type SavedValues<T extends SavedByName> = Omit<Insertable<Database[T]>, 'id' | 'tenant_id' | 'name' | 'created_at' | 'updated_at'>;

/** The workspace's row of `table` named `name`, with the id it gets if it is new, and what it holds. */
type ByName<T extends SavedByName> = [tenantTx: TenantTx, table: T, tenantId: string, name: string, newRowId: string, values: SavedValues<T>];

/**
 * Creates the workspace's row named `name` (with the id `newRowId`), or replaces the values of the one
 * with this name. The insert gives way on the name's unique key, so concurrent saves of a new name
 * create it once and the others replace it.
 */
export async function saveByName<T extends SavedByName>(...args: ByName<T>): Promise<{ row: Selectable<Database[T]>; created: boolean }> {
  const [tenantTx, table, tenantId, name, , values] = args;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- either table; the signature types the values and the row
  const tx = tenantTx as Transaction<any>;
  type Row = Selectable<Database[T]>;
  const inserted = await insertByNameIfNew(...args);
  if (inserted) return { row: inserted, created: true };
  const row = await tx
    .updateTable(table as string)
    .set({ ...values, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row: row as Row, created: false };
}

/**
 * Creates the workspace's row named `name` (with the id `newRowId`) unless one has that name: then
 * undefined, and nothing changes. The insert gives way on the name's unique key, so concurrent creates
 * of a new name make it once.
 */
export async function insertByNameIfNew<T extends SavedByName>(...[tenantTx, table, tenantId, name, newRowId, values]: ByName<T>): Promise<Selectable<Database[T]> | undefined> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- either table; the signature types the values and the row
  const tx = tenantTx as Transaction<any>;
  const inserted = await tx
    .insertInto(table as string)
    .values({ id: newRowId, tenant_id: tenantId, name, ...values })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  return inserted as Selectable<Database[T]> | undefined;
}
