import { findBrowserSignIn, signInSecretContext } from '../../db/browser-sign-ins.js';
import type { Db } from '../../db/database.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { openSecret, sealSecret } from '../secrets/secret-box.js';
import { ToolConfigError } from '../tools/errors.js';
import { withoutPartitionKeys, type StorageState } from './storage-state.js';

/** A sign-in's storage state sealed for its row (the JWE opens nowhere else). */
export function sealStorageState(tenantId: string, signInId: string, state: StorageState): Promise<string> {
  return sealSecret(JSON.stringify(withoutPartitionKeys(state)), signInSecretContext(tenantId, signInId));
}

/**
 * The sign-in a browser tool names, read and opened at call time (so no storage state is ever part of
 * a workflow's input, history or events): its origin and storage state. A sign-in deleted since the
 * tool was saved, or one that no key opens, is a tool error the model sees.
 */
export async function openSignIn(db: Db, tenantId: string, signInId: string): Promise<{ name: string; origin: string; storageState: StorageState }> {
  const row = await withTenant(db, tenantId, (tx) => findBrowserSignIn(tx, tenantId, signInId));
  if (!row || row.id !== signInId) throw new ToolConfigError(`the tool's saved sign-in '${signInId}' no longer exists`);
  try {
    const state = JSON.parse(await openSecret(row.storage_state, signInSecretContext(tenantId, row.id))) as StorageState;
    return { name: row.name, origin: row.origin, storageState: withoutPartitionKeys(state) };
  } catch (err) {
    throw new ToolConfigError(`the saved sign-in '${row.name}' cannot be read on this server: ${err instanceof Error ? err.message : String(err)}`);
  }
}
