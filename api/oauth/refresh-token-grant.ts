import type { Db } from '../../db/database.js';
import type { Client } from './clients.js';
import { oauthClock } from './clock.js';
import { lockGrant, revokeGrant } from './grants.js';
import { OAuthError } from './oauth-error.js';
import { grantedScope } from './scope.js';
import { sha256Hex } from './secrets.js';
import { narrowResource } from './token-resource.js';
import { issueTokenPair, REFRESH_TOKEN_PREFIX, type TokenResponse } from './tokens.js';

/**
 * grant_type=refresh_token (RFC 6749 §6) with rotation: every use answers a new refresh token and retires
 * the old one. An old refresh token presented again means two parties hold it, so the whole grant is
 * revoked (RFC 9700 §4.14.2).
 *
 * One transaction, under the grant's row lock: of two parallel refreshes with the same token, the first
 * rotates it and the second is a reuse.
 */
export async function refreshTokens(db: Db, client: Client, form: Map<string, string>, publicUrl: string): Promise<TokenResponse> {
  const refreshToken = form.get('refresh_token');
  if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
  grantedScope(form.get('scope')); // any scope asked for must be within the grant's, which is all there is
  if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) throw new OAuthError('invalid_grant', 'unknown refresh token');

  const outcome = await db.transaction().execute(async (tx): Promise<TokenResponse | OAuthError> => {
    const tokenHash = sha256Hex(refreshToken);
    const found = await tx.selectFrom('oauth_tokens').select('grant_id').where('token_hash', '=', tokenHash).where('kind', '=', 'refresh').executeTakeFirst();
    if (!found) return new OAuthError('invalid_grant', 'unknown refresh token');
    const grant = await lockGrant(tx, found.grant_id);
    const row = await tx.selectFrom('oauth_tokens').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirstOrThrow();

    if (grant.client_id !== client.id) return new OAuthError('invalid_grant', 'this refresh token was issued to another client');
    if (row.used_at) {
      await revokeGrant(tx, grant.id, 'refresh_token_reuse');
      return new OAuthError('invalid_grant', 'this refresh token was already used; the authorization is now revoked');
    }
    if (grant.revoked_at) return new OAuthError('invalid_grant', 'the authorization was revoked');
    const now = oauthClock.now();
    if (row.expires_at <= now) return new OAuthError('invalid_grant', 'the refresh token has expired');
    try {
      const resource = narrowResource(grant.resource, form.get('resource'), publicUrl);
      await tx.updateTable('oauth_tokens').set({ used_at: now }).where('token_hash', '=', tokenHash).execute();
      return await issueTokenPair(tx, grant, resource);
    } catch (err) {
      if (err instanceof OAuthError) return err;
      throw err;
    }
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}
