import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { fetchPage, type Page, type PageQuery } from './page.js';
import type { ApiKey, ApiKeyKind } from './schema.js';
import type { TenantTx } from './tenant-transaction.js';

export const API_KEY_PREFIX = 'svc_sk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_CHARS = 43; // 43 base62 characters carry 256 bits

/** A fresh `svc_sk_…` key: 43 base62 characters drawn by rejection sampling, so every one is uniform. */
export function generateApiKey(): string {
  let out = '';
  while (out.length < KEY_CHARS) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < KEY_CHARS) out += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + out;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Stores a new key for the tenant and returns the record with the plaintext key, shown only this once. */
export async function insertApiKey(
  tx: TenantTx,
  tenantId: string,
  kind: ApiKeyKind,
  name: string | null = null,
  key: string = generateApiKey(),
): Promise<{ record: ApiKey; key: string }> {
  const record = await tx
    .insertInto('api_keys')
    .values({
      id: newId('key'),
      tenant_id: tenantId,
      kind,
      name,
      key_hash: hashApiKey(key),
      key_prefix: key.slice(0, API_KEY_PREFIX.length + 6),
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { record, key };
}

/**
 * Finds the live key with this plaintext. It runs before any tenant is known, so it reads as the
 * connection's own role; it returns only what authentication needs.
 */
export async function findActiveApiKey(db: Db, key: string): Promise<Pick<ApiKey, 'id' | 'tenant_id' | 'kind'> | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id', 'kind'])
    .where('key_hash', '=', hashApiKey(key))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** The workspace's keys, revoked ones included. */
export async function listApiKeysPage(tx: TenantTx, tenantId: string, pageQuery: PageQuery): Promise<Page<ApiKey>> {
  return fetchPage(tx.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId), 'id', pageQuery);
}

/** Revokes a live key: its id, or undefined when the workspace has no such live key. */
export async function revokeApiKeyById(tx: TenantTx, tenantId: string, keyId: string): Promise<string | undefined> {
  const revoked = await tx
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return revoked?.id;
}
