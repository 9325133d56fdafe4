import { API_KEY_PREFIX, findApiKeyEvenRevoked, insertApiKey } from './api-keys.js';
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
 * adds that key to the workspace; one that was revoked stays revoked (the start goes on without it).
 */
export async function ensureInitialWorkspace(db: Db, name: string, initApiKey?: string): Promise<BootstrapResult> {
  if (initApiKey) {
    assertInitApiKeyStrong(initApiKey);
    const existing = await findApiKeyEvenRevoked(db, initApiKey);
    if (existing?.revoked_at) {
      // Under `restart: unless-stopped` a crash here would be a crash loop; the workspace has other keys.
      console.warn(`[platform] INIT_API_KEY was revoked (key ${existing.id}); it stays revoked and is not used. Remove it from the environment.`);
    }
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

/** At least as many characters after the prefix as 32 base62 ones: about 190 bits when they are random. */
export const INIT_API_KEY_MIN_SECRET_CHARACTERS = 32;

/**
 * INIT_API_KEY is a management key chosen by a person: refuse one that is not `svc_sk_` plus at least
 * 32 characters of a key alphabet, or that is visibly not random (a few characters repeated).
 */
export function assertInitApiKeyStrong(key: string): void {
  const secret = key.startsWith(API_KEY_PREFIX) ? key.slice(API_KEY_PREFIX.length) : undefined;
  const distinct = new Set(secret ?? '').size;
  if (secret === undefined || secret.length < INIT_API_KEY_MIN_SECRET_CHARACTERS || !/^[A-Za-z0-9_-]+$/.test(secret) || distinct < 8) {
    throw new Error(
      `INIT_API_KEY must be ${API_KEY_PREFIX} followed by at least ${INIT_API_KEY_MIN_SECRET_CHARACTERS} random letters, digits, '-' or '_' ` +
        `(e.g. ${API_KEY_PREFIX}$(openssl rand -hex 24)); refusing to start with this one`,
    );
  }
}
