import type { Db } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import { addMember } from '../../db/members.js';
import { missingTenantIds } from '../../db/tenants.js';
import { revokeEveryGrantOf } from './grants.js';
import { DECOY_PASSWORD_HASH, hashPassword, needsRehash, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from './passwords.js';
import { endEverySessionOf } from './sessions.js';

/** People who sign in on the consent page, and the workspaces each belongs to. */

export interface Workspace {
  id: string;
  name: string;
}

export class UserInputError extends Error {}

/** Trimmed and lower-cased; throws UserInputError when it is not an address. */
export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (normalized.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(normalized)) throw new UserInputError(`'${email}' is not an e-mail address`);
  return normalized;
}

export function checkPasswordStrength(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH) throw new UserInputError(`the password must have at least ${PASSWORD_MIN_LENGTH} characters`);
  if (password.length > PASSWORD_MAX_LENGTH) throw new UserInputError(`the password must have at most ${PASSWORD_MAX_LENGTH} characters`);
}

/**
 * Creates the user, or sets the password of the existing user with that e-mail, and makes them a member
 * of every workspace listed (existing memberships are kept). A password that changes signs the person
 * out everywhere, as a reset does: their browser sessions end and every OAuth grant they gave is
 * revoked with its tokens, since whoever knew the old password may hold those. Restating the same
 * password (to add a workspace) keeps them.
 */
export async function upsertUser(
  db: Db,
  input: { email: string; password: string; tenantIds: string[] },
): Promise<{ userId: string; email: string; created: boolean; passwordChanged: boolean }> {
  const email = normalizeEmail(input.email);
  checkPasswordStrength(input.password);
  if (input.tenantIds.length === 0) throw new UserInputError('a user needs at least one workspace');
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (tx) => {
    const missing = await missingTenantIds(tx, input.tenantIds);
    if (missing.length) throw new UserInputError(`no workspace with id ${missing.join(', ')}`);

    const existing = await tx.selectFrom('users').select(['id', 'password_hash']).where('email', '=', email).forUpdate().executeTakeFirst();
    const userId = existing?.id ?? newId('usr');
    const passwordChanged = existing !== undefined && !(await verifyPassword(input.password, existing.password_hash));
    if (!existing) {
      await tx.insertInto('users').values({ id: userId, email, password_hash: passwordHash }).execute();
    } else if (passwordChanged) {
      await tx.updateTable('users').set({ password_hash: passwordHash, updated_at: new Date() }).where('id', '=', userId).execute();
      await endEverySessionOf(tx, userId);
      await revokeEveryGrantOf(tx, userId, 'password_changed');
    } else if (needsRehash(existing.password_hash)) {
      await tx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
    }
    // A workspace's first member becomes its owner (db/members.ts).
    for (const tenantId of input.tenantIds) await addMember(tx, tenantId, userId);
    return { userId, email, created: !existing, passwordChanged };
  });
}

/** A new account with no workspace (an invite adds one); undefined when the address already has an account. */
export async function createUser(db: Db, input: { email: string; password: string }): Promise<{ id: string; email: string; passwordHash: string } | undefined> {
  const email = normalizeEmail(input.email);
  checkPasswordStrength(input.password);
  const passwordHash = await hashPassword(input.password);
  const created = await db
    .insertInto('users')
    .values({ id: newId('usr'), email, password_hash: passwordHash })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(['id', 'email', 'password_hash'])
    .executeTakeFirst();
  return created && { id: created.id, email: created.email, passwordHash: created.password_hash };
}

export async function userExists(db: Db, email: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()) !== undefined;
}

/**
 * The user with this e-mail and password (and the hash that stands for it now, for startSession), or
 * undefined; takes as long for an unknown e-mail as for a wrong password.
 */
export async function checkCredentials(db: Db, email: string, password: string): Promise<{ id: string; email: string; passwordHash: string } | undefined> {
  let normalized: string;
  try {
    normalized = normalizeEmail(email);
  } catch {
    normalized = '';
  }
  const user = normalized ? await db.selectFrom('users').select(['id', 'email', 'password_hash']).where('email', '=', normalized).executeTakeFirst() : undefined;
  const candidate = password.length <= PASSWORD_MAX_LENGTH ? password : '';
  const matches = await verifyPassword(candidate, user?.password_hash ?? DECOY_PASSWORD_HASH);
  if (!user || !matches || !candidate) return undefined;
  const passwordHash = needsRehash(user.password_hash) ? await rehash(db, user.id, user.password_hash, candidate) : user.password_hash;
  return passwordHash === undefined ? undefined : { id: user.id, email: user.email, passwordHash };
}

/**
 * Remakes a hash of older parameters now that its password is known, only if the stored hash is still
 * the one checked. Answers the hash stored now, or undefined when the password was changed meanwhile
 * (the CLI): the one checked no longer signs in. A failed write keeps the old hash; the next sign-in
 * tries again.
 */
async function rehash(db: Db, userId: string, checked: string, password: string): Promise<string | undefined> {
  try {
    const remade = await hashPassword(password);
    const updated = await db.updateTable('users').set({ password_hash: remade }).where('id', '=', userId).where('password_hash', '=', checked).executeTakeFirst();
    return updated.numUpdatedRows > 0n ? remade : undefined;
  } catch (err) {
    console.error(`[oauth] could not remake the password hash of ${userId}:`, err instanceof Error ? err.message : err);
    return checked;
  }
}

/** The workspaces the user belongs to, by name. Read before any tenant is chosen, as the connecting role. */
export async function listWorkspaces(db: Db, userId: string): Promise<Workspace[]> {
  return db
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select(['tenants.id', 'tenants.name'])
    .where('memberships.user_id', '=', userId)
    .orderBy('tenants.name')
    .orderBy('tenants.id')
    .execute();
}
