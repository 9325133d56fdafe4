import { insertApiKey } from './api-keys.js';
import type { Db } from './database.js';
import { newId } from './ids.js';
import type { Tenant } from './schema.js';
import { withTenant } from './tenant-transaction.js';

/** Creates a workspace and its first management key (the given one, or a fresh one). */
export async function createTenant(db: Db, name: string, apiKey?: string): Promise<{ tenant: Tenant; apiKey: string }> {
  const tenant = await db
    .insertInto('tenants')
    .values({ id: newId('ten'), name })
    .returningAll()
    .executeTakeFirstOrThrow();
  const { key } = await withTenant(db, tenant.id, (tx) => insertApiKey(tx, tenant.id, 'management', 'initial', apiKey));
  return { tenant, apiKey: key };
}

export async function countTenants(db: Db): Promise<number> {
  const row = await db.selectFrom('tenants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
