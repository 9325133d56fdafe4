import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { ProviderConnectionRow, ProviderKind, ProviderModelPrice } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `provider_connections` table: a workspace's own model providers. Secrets arrive here already
 * sealed (activities/secrets/secret-box.ts); this module only stores and finds them.
 */

export interface StoredProviderConnection {
  kind: ProviderKind;
  base_url: string;
  /** JWE, or null for a connection without a key. */
  api_key: string | null;
  api_key_last4: string | null;
  /** JWE of the headers' JSON object, or null for none. */
  headers: string | null;
  header_names: string[];
  prices: Record<string, ProviderModelPrice>;
}

function stored(values: StoredProviderConnection) {
  return { ...values, header_names: JSON.stringify(values.header_names), prices: JSON.stringify(values.prices) };
}

const connectionsPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('provider_connections').selectAll().where('tenant_id', '=', tenantId));

export async function listProviderConnectionsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<ProviderConnectionRow>> {
  return connectionsPage(reader, { tenantId }, pageQuery);
}

/** The connection named `name` (names are what model ids carry, so connections are found by name only). */
export async function findProviderConnection(reader: TenantScoped, tenantId: string, name: string): Promise<ProviderConnectionRow | undefined> {
  return reader.selectFrom('provider_connections').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
}

/** A new connection's id, made before its secrets are sealed: they are sealed for their row (secretContext). */
export function newProviderConnectionId(): string {
  return newId('prv');
}

/** Where a sealed secret of a connection belongs: its JWE names this, and opens nowhere else. */
export function secretContext(tenantId: string, id: string, column: 'api_key' | 'headers'): string {
  return `provider_connections/${tenantId}/${id}/${column}`;
}

/** Creates the connection `id` unless the workspace has one by this name (then undefined, and nothing changes). */
export async function insertProviderConnectionIfNew(tx: TenantTx, tenantId: string, id: string, name: string, values: StoredProviderConnection): Promise<ProviderConnectionRow | undefined> {
  return tx
    .insertInto('provider_connections')
    .values({ id, tenant_id: tenantId, name, ...stored(values) })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Renames the connection and replaces what it holds (the caller merges a partial change into the whole). */
export async function updateProviderConnectionById(tx: TenantTx, tenantId: string, id: string, name: string, values: StoredProviderConnection): Promise<ProviderConnectionRow> {
  return tx
    .updateTable('provider_connections')
    .set({ name, ...stored(values), updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteProviderConnectionById(tx: TenantTx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('provider_connections').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}

/** Every connection's prices, by connection name, for costing a run (connections without prices left out). */
export async function listProviderPrices(tx: TenantTx, tenantId: string): Promise<Map<string, Record<string, ProviderModelPrice>>> {
  const rows = await tx.selectFrom('provider_connections').select(['name', 'prices']).where('tenant_id', '=', tenantId).execute();
  return new Map(rows.filter((row) => Object.keys(row.prices).length > 0).map((row) => [row.name, row.prices]));
}

/** The names of the workspace's connections: the providers its model ids may name beyond the server's own. */
export async function listProviderNames(tx: TenantTx, tenantId: string): Promise<Set<string>> {
  const rows = await tx.selectFrom('provider_connections').select('name').where('tenant_id', '=', tenantId).execute();
  return new Set(rows.map((row) => row.name));
}
