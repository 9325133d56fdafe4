import type { Db } from '../../db/database.js';
import type { Client } from './clients.js';
import { oauthClock } from './clock.js';
import { lockGrant, revokeGrant } from './grants.js';
import { OAuthError } from './oauth-error.js';
import { checkCodeVerifier } from './pkce.js';
import { narrowResource } from './token-resource.js';
import { issueTokenPair, type TokenResponse } from './tokens.js';
import { sha256Hex } from './secrets.js';

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3). A code is consumed by the first token request that
 * presents it, whether that request succeeds or not; presenting it again means it leaked, so the grant —
 * and every token already issued from it — is revoked (RFC 6749 §4.1.2).
 *
 * One transaction, under the grant's row lock: two requests with the same code cannot both win.
 */
export async function exchangeAuthorizationCode(db: Db, client: Client, form: Map<string, string>, publicUrl: string): Promise<TokenResponse> {
  const code = form.get('code');
  if (!code) throw new OAuthError('invalid_request', 'code is required');

  const outcome = await db.transaction().execute(async (tx): Promise<TokenResponse | OAuthError> => {
    const codeHash = sha256Hex(code);
    const found = await tx.selectFrom('oauth_codes').select('grant_id').where('code_hash', '=', codeHash).executeTakeFirst();
    if (!found) return new OAuthError('invalid_grant', 'unknown authorization code');
    const grant = await lockGrant(tx, found.grant_id);
    const row = await tx.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).forUpdate().executeTakeFirstOrThrow();

    if (row.used_at) {
      await revokeGrant(tx, grant.id, 'code_replay');
      return new OAuthError('invalid_grant', 'this authorization code was already used; every token issued from it is now revoked');
    }
    const now = oauthClock.now();
    await tx.updateTable('oauth_codes').set({ used_at: now }).where('code_hash', '=', codeHash).execute();
    try {
      if (grant.client_id !== client.id) throw new OAuthError('invalid_grant', 'this authorization code was issued to another client');
      if (grant.revoked_at) throw new OAuthError('invalid_grant', 'the authorization was revoked');
      if (row.expires_at <= now) throw new OAuthError('invalid_grant', 'the authorization code has expired');
      if ((form.get('redirect_uri') ?? null) !== row.redirect_uri) {
        throw new OAuthError('invalid_grant', 'redirect_uri must be exactly the one sent to the authorize endpoint');
      }
      checkCodeVerifier(row.code_challenge, form.get('code_verifier'));
      return await issueTokenPair(tx, grant, narrowResource(grant.resource, form.get('resource'), publicUrl));
    } catch (err) {
      // Answered, not thrown: the code must stay consumed.
      if (err instanceof OAuthError) return err;
      throw err;
    }
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}
