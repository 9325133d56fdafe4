import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByName, findByRef } from './refs.js';
import type { BrowserSignInRow } from './schema.js';
import { insertByNameIfNew } from './save-by-name.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `browser_sign_ins` table: saved sign-ins for the browser tool. The storage state arrives here
 * already sealed (activities/secrets/secret-box.ts); this module only stores and finds it.
 */

export interface StoredBrowserSignIn {
  origin: string;
  /** JWE of the storage state's JSON. */
  storage_state: string;
  cookie_count: number;
  cookie_domains: string[];
  local_storage_count: number;
  cookies_expire_at: Date | null;
}

function stored(values: StoredBrowserSignIn) {
  return { ...values, cookie_domains: JSON.stringify(values.cookie_domains) };
}

const browserSignInsPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('browser_sign_ins').selectAll().where('tenant_id', '=', tenantId));

export async function listBrowserSignInsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<BrowserSignInRow>> {
  return browserSignInsPage(reader, { tenantId }, pageQuery);
}

/** The sign-in `ref` names: by id, else by name (db/refs.ts). */
export async function findBrowserSignIn(reader: TenantScoped, tenantId: string, ref: string): Promise<BrowserSignInRow | undefined> {
  return findByRef(reader.selectFrom('browser_sign_ins').selectAll(), 'browser_sign_ins', tenantId, ref);
}

/** The sign-in named `name` (by name only: a create by name whose name is taken). */
export async function findBrowserSignInByName(tx: TenantTx, tenantId: string, name: string): Promise<BrowserSignInRow | undefined> {
  return findByName(tx.selectFrom('browser_sign_ins').selectAll(), 'browser_sign_ins', tenantId, name);
}

/** A new sign-in's id, made before its storage state is sealed: it is sealed for its row (signInSecretContext). */
export function newBrowserSignInId(): string {
  return newId('bsi');
}

/** Where a sign-in's sealed storage state belongs: its JWE names this, and opens nowhere else. */
export function signInSecretContext(tenantId: string, id: string): string {
  return `browser_sign_ins/${tenantId}/${id}/storage_state`;
}

/** Creates the sign-in `id` unless the workspace has one by this name (then undefined, and nothing changes). */
export async function insertBrowserSignInIfNew(tx: TenantTx, tenantId: string, id: string, name: string, values: StoredBrowserSignIn): Promise<BrowserSignInRow | undefined> {
  return insertByNameIfNew(tx, 'browser_sign_ins', tenantId, name, id, stored(values));
}

/** Renames the sign-in and replaces what it holds (the caller merges a partial change into the whole). */
export async function updateBrowserSignInById(tx: TenantTx, tenantId: string, id: string, name: string, values: StoredBrowserSignIn): Promise<BrowserSignInRow> {
  return tx
    .updateTable('browser_sign_ins')
    .set({ name, ...stored(values), updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteBrowserSignInById(tx: TenantTx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('browser_sign_ins').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}
