import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { authenticateClient } from './clients.js';
import { lockGrant, revokeGrant } from './grants.js';
import { readForm } from './http.js';
import { OAuthError } from './oauth-error.js';
import { sha256Hex } from './secrets.js';

/**
 * POST /oauth/revoke (RFC 7009). Revoking either token of a grant revokes the grant, and with it every
 * token issued from it. The answer is 200 whatever the token was — unknown, expired, already revoked,
 * or another client's (which is left alone) — so the endpoint tells nobody which tokens exist.
 */
export async function revocationEndpoint(ctx: Koa.Context, db: Db): Promise<{ status: number }> {
  const form = await readForm(ctx);
  const client = await authenticateClient(db, ctx, form);
  const token = form.get('token');
  if (!token) throw new OAuthError('invalid_request', 'token is required');

  await db.transaction().execute(async (tx) => {
    const found = await tx.selectFrom('oauth_tokens').select('grant_id').where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
    if (!found) return;
    const grant = await lockGrant(tx, found.grant_id);
    if (grant.client_id === client.id) await revokeGrant(tx, grant.id, 'revoked_by_client');
  });
  return { status: 200 };
}
