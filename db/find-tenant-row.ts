import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { TenantScoped } from './tenant-transaction.js';

/** The tenant's row of `table` whose columns equal those of `keys` (none of them null); undefined when there is none. */
export async function findTenantRow<T extends keyof Database>(
  reader: TenantScoped,
  table: T,
  tenantId: string,
  keys: Partial<Selectable<Database[T]>>,
): Promise<Selectable<Database[T]> | undefined> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table; the signature types the keys and the row
  const db = reader as Kysely<any>;
  const row = await db
    .selectFrom(table as string)
    .selectAll()
    .where((eb) => eb.and({ ...keys, tenant_id: tenantId }))
    .executeTakeFirst();
  return row as Selectable<Database[T]> | undefined;
}
