import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { secondsFromNow } from './clock.js';
import { LIFETIMES } from './lifetimes.js';
import type { Resource } from './resource.js';
import { randomSecret, sha256Hex } from './secrets.js';

export const ACCESS_TOKEN_PREFIX = 'svc_at_';
export const REFRESH_TOKEN_PREFIX = 'svc_rt_';

/** The token endpoint's success body (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Issues an access token and a refresh token for the grant; only their hashes are stored. */
export async function issueTokenPair(
  tx: Transaction<Database>,
  grant: { id: string; tenant_id: string; scope: string },
  resource: Resource | null,
): Promise<TokenResponse> {
  const accessToken = randomSecret(ACCESS_TOKEN_PREFIX);
  const refreshToken = randomSecret(REFRESH_TOKEN_PREFIX);
  const common = { tenant_id: grant.tenant_id, grant_id: grant.id, resource: resource?.uri ?? null, resource_path: resource?.path ?? null, used_at: null };
  await tx
    .insertInto('oauth_tokens')
    .values([
      { ...common, token_hash: sha256Hex(accessToken), kind: 'access', expires_at: secondsFromNow(LIFETIMES.accessToken) },
      { ...common, token_hash: sha256Hex(refreshToken), kind: 'refresh', expires_at: secondsFromNow(LIFETIMES.refreshToken) },
    ])
    .execute();
  return { access_token: accessToken, token_type: 'Bearer', expires_in: LIFETIMES.accessToken, refresh_token: refreshToken, scope: grant.scope };
}
