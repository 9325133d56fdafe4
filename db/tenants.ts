import { insertApiKey } from './api-keys.js';
import type { Db } from './database.js';
import { newId } from './ids.js';
import type { Transaction } from 'kysely';
import type { Database, Tenant } from './schema.js';
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

export async function findTenant(db: Db | Transaction<Database>, tenantId: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst();
}

/** The oldest workspace with this name (names need not be unique). */
export async function findTenantByName(db: Db, name: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').selectAll().where('name', '=', name).orderBy('id').executeTakeFirst();
}

/** Those of `tenantIds` that name no workspace. */
export async function missingTenantIds(db: Db | Transaction<Database>, tenantIds: readonly string[]): Promise<string[]> {
  if (tenantIds.length === 0) return [];
  const found = await db.selectFrom('tenants').select('id').where('id', 'in', tenantIds).execute();
  return tenantIds.filter((id) => !found.some((tenant) => tenant.id === id));
}
