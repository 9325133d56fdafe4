import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import type { Database } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { AuthorizationRequest } from './authorization-request.js';
import { oauthClock, secondsFromNow } from './clock.js';
import { LIFETIMES } from './lifetimes.js';
import { randomSecret, sha256Hex } from './secrets.js';

/**
 * A grant is one approved consent: a user let a client act in one workspace. Its code and every token
 * issued from it point back at it, so revoking the grant revokes all of them at once.
 */

export type RevocationReason = 'code_replay' | 'refresh_token_reuse' | 'revoked_by_client' | 'member_removed' | 'password_changed';

/** Records the consent and answers a fresh authorization code for it. Runs as the chosen workspace (RLS). */
export async function approveAuthorization(db: Db, request: AuthorizationRequest, userId: string, tenantId: string): Promise<string> {
  const code = randomSecret();
  await withTenant(db, tenantId, async (tx) => {
    const grant = await tx
      .insertInto('oauth_grants')
      .values({
        id: newId('grt'),
        tenant_id: tenantId,
        user_id: userId,
        client_id: request.client.id,
        scope: request.scope,
        resource: request.resource?.uri ?? null,
        revoked_at: null,
        revoked_reason: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await tx
      .insertInto('oauth_codes')
      .values({
        code_hash: sha256Hex(code),
        tenant_id: tenantId,
        grant_id: grant.id,
        redirect_uri: request.redirectUriParameter,
        code_challenge: request.codeChallenge,
        expires_at: secondsFromNow(LIFETIMES.code),
        used_at: null,
      })
      .execute();
  });
  await forgetExpired(db);
  return code;
}

/**
 * Revokes the grant, and so its code and every token issued from it. The caller holds the grant's row
 * lock (see lockGrant), so a concurrent exchange either finishes before or sees the revocation.
 */
export async function revokeGrant(tx: Transaction<Database>, grantId: string, reason: RevocationReason): Promise<void> {
  await tx
    .updateTable('oauth_grants')
    .set({ revoked_at: oauthClock.now(), revoked_reason: reason })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Revokes every live grant the user gave in the workspace (they left it), and so all their codes and
 * tokens there. The update takes each grant's row lock, so a token exchange in flight finishes first
 * and the tokens it issued die with the grant.
 */
export async function revokeUserGrants(tx: Transaction<Database>, tenantId: string, userId: string, reason: RevocationReason): Promise<void> {
  await tx
    .updateTable('oauth_grants')
    .set({ revoked_at: oauthClock.now(), revoked_reason: reason })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Revokes every live grant the user gave, in every workspace (their password changed: whoever held it
 * may hold tokens too). Runs as the owner role, past row-level security, in the caller's transaction.
 */
export async function revokeEveryGrantOf(tx: Transaction<Database>, userId: string, reason: RevocationReason): Promise<void> {
  await tx.updateTable('oauth_grants').set({ revoked_at: oauthClock.now(), revoked_reason: reason }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
}

/**
 * Locks the grant row for the rest of the transaction. Every change to a grant, its code or its tokens
 * takes this lock first, so they happen one at a time and always in the same order (no deadlocks).
 */
export async function lockGrant(tx: Transaction<Database>, grantId: string) {
  return tx.selectFrom('oauth_grants').selectAll().where('id', '=', grantId).forUpdate().executeTakeFirstOrThrow();
}

/**
 * Deletes codes and tokens that expired a day ago: long enough that a replayed code or a reused refresh
 * token is still recognized (and revokes its grant) for a while after it stopped working anyway.
 */
async function forgetExpired(db: Db): Promise<void> {
  const dayAgo = new Date(oauthClock.now().getTime() - 24 * 60 * 60 * 1000);
  await db.deleteFrom('oauth_codes').where('expires_at', '<', dayAgo).execute();
  await db.deleteFrom('oauth_tokens').where('expires_at', '<', dayAgo).execute();
}
