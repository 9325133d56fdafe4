import { apiKeyCacheOf, forgetRevokedKey, type ActiveApiKey } from './api-key-cache.js';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { ApiKey, ApiKeyKind } from './schema.js';
import { randomSecret, sha256Hex } from './secrets.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

export const API_KEY_PREFIX = 'svc_sk_';

/** A fresh `svc_sk_…` key: 43 uniform base62 characters (randomSecret). */
export function generateApiKey(): string {
  return randomSecret(API_KEY_PREFIX);
}

/** What is stored in place of the key. */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
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
export async function findActiveApiKey(db: Db, key: string): Promise<ActiveApiKey | undefined> {
  return selectActiveApiKey(db, hashApiKey(key));
}

/** findActiveApiKey through the API's cache of lookups when `db` has one (db/api-key-cache.ts): what authentication uses. */
export async function findActiveApiKeyCached(db: Db, key: string): Promise<ActiveApiKey | undefined> {
  const keyHash = hashApiKey(key);
  const cache = apiKeyCacheOf(db);
  return cache ? cache.find(keyHash, () => selectActiveApiKey(db, keyHash)) : selectActiveApiKey(db, keyHash);
}

async function selectActiveApiKey(db: Db, keyHash: string): Promise<ActiveApiKey | undefined> {
  return db.selectFrom('api_keys').select(['id', 'tenant_id', 'kind']).where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
}

/** The key with this plaintext, revoked or not: whether it was ever issued, and to whom. */
export async function findApiKeyEvenRevoked(db: Db, key: string): Promise<Pick<ApiKey, 'id' | 'tenant_id' | 'revoked_at'> | undefined> {
  return db.selectFrom('api_keys').select(['id', 'tenant_id', 'revoked_at']).where('key_hash', '=', hashApiKey(key)).executeTakeFirst();
}

/** The workspace's keys, revoked ones included. */
const apiKeysPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId));

export async function listApiKeysPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<ApiKey>> {
  return apiKeysPage(reader, { tenantId }, pageQuery);
}

/** Why a live key was not revoked: it is the workspace's last management key, without which nobody could manage it again. */
export class LastManagementKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`key '${keyId}' is the workspace's last active management key; create another management key before revoking it`);
  }
}

/**
 * Revokes a live key: its id, or undefined when the workspace has no such live key. Refuses
 * (LastManagementKeyError) to revoke the last live management key; the workspace's live management keys
 * are locked first, so two concurrent revocations cannot each leave the other as the last one.
 */
export async function revokeApiKeyById(tx: TenantTx, tenantId: string, keyId: string): Promise<string | undefined> {
  const managementKeys = await tx
    .selectFrom('api_keys')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'management')
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  if (managementKeys.length === 1 && managementKeys[0]!.id === keyId) throw new LastManagementKeyError(keyId);
  const revoked = await tx
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  // Before the commit, so this process's caches cannot accept the key once the revocation has answered.
  if (revoked) forgetRevokedKey(revoked.id);
  return revoked?.id;
}
