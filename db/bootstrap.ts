import { findActiveApiKey, insertApiKey } from './api-keys.js';
import type { Db } from './database.js';
import { createTenant, findTenantByName } from './tenants.js';
import { withTenant } from './tenant-transaction.js';

export interface BootstrapResult {
  tenantId: string;
  /** The management key made on this start, to print once; undefined when nothing was made. */
  newApiKey?: string;
}

/**
 * Makes sure the initial workspace exists. On the first start it is created with INIT_API_KEY as its
 * management key, or with a fresh key that the caller prints once. A later start with a new INIT_API_KEY
 * adds that key to the workspace.
 */
export async function ensureInitialWorkspace(db: Db, name: string, initApiKey?: string): Promise<BootstrapResult> {
  if (initApiKey) {
    const existing = await findActiveApiKey(db, initApiKey);
    if (existing) return { tenantId: existing.tenant_id };
  }
  const tenant = await findTenantByName(db, name);
  if (!tenant) {
    const created = await createTenant(db, name, initApiKey);
    return { tenantId: created.tenant.id, newApiKey: initApiKey ? undefined : created.apiKey };
  }
  if (initApiKey) await withTenant(db, tenant.id, (tx) => insertApiKey(tx, tenant.id, 'management', 'INIT_API_KEY', initApiKey));
  return { tenantId: tenant.id };
}
