import type { Db, OpenDatabase } from './database.js';
import type { ApiKey } from './schema.js';

/** What the api_keys trigger (migration 0017) notifies, with the key's id, when a key row changes or goes. */
export const API_KEYS_CHANGED_CHANNEL = 'api_keys_changed';

/**
 * How long a looked-up key is trusted without asking the database again. Revocations do not wait for
 * it (they notify every process at commit); it bounds the damage of a notification lost anyway.
 */
export const API_KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

export type ActiveApiKey = Pick<ApiKey, 'id' | 'tenant_id' | 'kind'>;

/** Keys being revoked by this process, until when: neither served from nor stored in any cache till then. */
const revoking = new Map<string, number>();
const caches = new WeakMap<Db, ApiKeyCache>();
const openCaches = new Set<ApiKeyCache>();

/**
 * A short-lived, in-process cache of API-key lookups, one per open database. A plain API request made
 * six round trips to Postgres, one of them this lookup (docs/performance.md); a key is looked up again
 * and again, and changes almost never.
 *
 * A revoked key must not be accepted after the revocation answered. Three things see to that:
 * - on every process, the api_keys trigger's NOTIFY (sent at commit, whatever ended the key) drops it;
 * - on the revoking process, whose own NOTIFY may arrive after its answer, revokeApiKeyById marks the key
 *   (`forgetRevokedKey`) before its transaction commits, so that no cache serves or stores it meanwhile;
 * - a lookup stores its row only if no invalidation happened while it read (the generation), else a read
 *   that began before the revocation committed could store the live row after the NOTIFY dropped it.
 * While the listening connection is lost, notifications may be missed: the cache is emptied and bypassed
 * until it listens again (and emptied again then). Unknown keys are not cached: a new key works at once.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: ActiveApiKey; expiresAt: number }>();
  private generation = 0;
  private listening = true;
  private unlisten: (() => Promise<void>) | undefined;

  private constructor(private readonly db: Db) {}

  /** Starts listening on the database before answering, and serves its lookups from then on (`findActiveApiKeyCached`). */
  static async start(database: OpenDatabase): Promise<ApiKeyCache> {
    const cache = new ApiKeyCache(database.db);
    cache.unlisten = await database.listen(
      API_KEYS_CHANGED_CHANNEL,
      (keyId) => cache.forget(keyId),
      (listening) => {
        cache.listening = listening;
        cache.clear();
      },
    );
    caches.set(database.db, cache);
    openCaches.add(cache);
    return cache;
  }

  async close(): Promise<void> {
    caches.delete(this.db);
    openCaches.delete(this);
    this.clear();
    await this.unlisten?.();
  }

  /** The live key whose hash this is, from the cache while fresh, else from `load` (the database). */
  async find(keyHash: string, load: () => Promise<ActiveApiKey | undefined>): Promise<ActiveApiKey | undefined> {
    const now = Date.now();
    const hit = this.entries.get(keyHash);
    if (hit && hit.expiresAt > now && this.listening && !isRevoking(hit.key.id, now)) return hit.key;
    if (hit) this.entries.delete(keyHash);
    const generation = this.generation;
    const key = await load();
    if (key && generation === this.generation && this.listening && !isRevoking(key.id, Date.now())) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(keyHash, { key, expiresAt: Date.now() + API_KEY_CACHE_TTL_MS });
    }
    return key;
  }

  forget(keyId: string): void {
    this.generation++;
    for (const [hash, entry] of this.entries) if (entry.key.id === keyId) this.entries.delete(hash);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

/** The cache serving `db`'s lookups, if the API started one for it. */
export function apiKeyCacheOf(db: Db): ApiKeyCache | undefined {
  return caches.get(db);
}

/**
 * Called inside the transaction that revokes `keyId`, before it commits: every cache of this process
 * drops the key and neither serves nor stores it for a TTL — by when the NOTIFY has long arrived. If the
 * transaction rolls back, the key is only looked up in the database for that while.
 */
export function forgetRevokedKey(keyId: string): void {
  const now = Date.now();
  for (const [id, until] of revoking) if (until <= now) revoking.delete(id);
  revoking.set(keyId, now + API_KEY_CACHE_TTL_MS);
  for (const cache of openCaches) cache.forget(keyId);
}

function isRevoking(keyId: string, now: number): boolean {
  const until = revoking.get(keyId);
  if (until === undefined) return false;
  if (until > now) return true;
  revoking.delete(keyId);
  return false;
}
