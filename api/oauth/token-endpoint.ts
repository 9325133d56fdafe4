import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { exchangeAuthorizationCode } from './authorization-code-grant.js';
import { authenticateClient } from './clients.js';
import { readForm } from './http.js';
import { OAuthError } from './oauth-error.js';
import { refreshTokens } from './refresh-token-grant.js';
import type { TokenResponse } from './tokens.js';

/** POST /oauth/token: authenticates the client, then runs the grant it asks for. */
export async function tokenEndpoint(ctx: Koa.Context, db: Db, publicUrl: string): Promise<{ status: number; body: TokenResponse }> {
  const form = await readForm(ctx);
  const client = await authenticateClient(db, ctx, form);
  const grantType = form.get('grant_type');
  switch (grantType) {
    case 'authorization_code':
      return { status: 200, body: await exchangeAuthorizationCode(db, client, form, publicUrl) };
    case 'refresh_token':
      return { status: 200, body: await refreshTokens(db, client, form, publicUrl) };
    case undefined:
      throw new OAuthError('invalid_request', 'grant_type is required');
    default:
      throw new OAuthError('unsupported_grant_type', `grant_type '${grantType}' is not supported; use authorization_code or refresh_token`);
  }
}
