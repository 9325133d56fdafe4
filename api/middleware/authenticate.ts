import type Koa from 'koa';
import { API_KEY_PREFIX, findActiveApiKeyCached } from '../../db/api-keys.js';
import { PUBLISHABLE_KEY_PREFIX } from '../../db/deployments.js';
import { authenticatePublishableKey, publishableKeyStands } from '../deployments/publishable-key.js';
import type { Db } from '../../db/database.js';
import { ApiError } from '../errors.js';
import { ACCESS_TOKEN_PREFIX, accessTokenCoversPath, findActiveAccessToken, grantStands } from '../oauth/access-tokens.js';
import type { Access, Caller } from '../operation.js';

/**
 * Resolves the request's bearer credential to a caller, or throws 401/403 as the access level demands.
 * A deployment's publishable key is refused (403) unless the operation takes one (`publishable`).
 */
export async function authenticate(
  ctx: Koa.Context,
  db: Db,
  access: Exclude<Access, 'public'>,
  { publishable = false, publicUrl }: { publishable?: boolean; publicUrl?: string } = {},
): Promise<Caller> {
  if (!ctx.get('Authorization')) throw unauthorized('missing Authorization header');
  const credential = bearerCredential(ctx);
  if (credential === undefined) throw unauthorized('Authorization header must be "Bearer <credential>"');
  if (credential.startsWith(ACCESS_TOKEN_PREFIX)) return authenticateAccessToken(ctx, db, access, credential);
  if (credential.startsWith(PUBLISHABLE_KEY_PREFIX)) {
    return authenticatePublishableKey(ctx, db, serviceOriginOf(publicUrl), credential, publishable && access !== 'management');
  }
  if (!credential.startsWith(API_KEY_PREFIX)) throw unauthorized(`credential must start with ${API_KEY_PREFIX} or ${ACCESS_TOKEN_PREFIX}`);

  const key = await findActiveApiKeyCached(db, credential);
  if (!key) throw unauthorized('unknown or revoked credential');
  if (access === 'management' && key.kind !== 'management') {
    throw new ApiError('forbidden', 'this operation needs a management key');
  }
  return { tenantId: key.tenant_id, keyId: key.id, kind: key.kind };
}

/**
 * Whether the credential that authenticated `caller` on this request still stands: a long response (an
 * event stream) asks again while it lasts, so that revoking an API key, an OAuth grant (or the person's
 * membership), rotating a deployment's publishable key or taking the page's origin off its
 * `allowed_origins` ends the streams it opened, not only its next requests. An access token's expiry does not end them: it bounds when the token may open a stream, and
 * the grant is what its user revokes. The API key comes from the process's cache, which a revocation
 * empties of it on every process as it commits (db/api-key-cache.ts); the others are read from the database.
 */
export async function credentialStands(ctx: Koa.Context, db: Db, caller: Caller, publicUrl: string | undefined): Promise<boolean> {
  const credential = bearerCredential(ctx);
  if (credential === undefined) return false;
  if (credential.startsWith(ACCESS_TOKEN_PREFIX)) return grantStands(db, caller.keyId);
  if (credential.startsWith(PUBLISHABLE_KEY_PREFIX)) return publishableKeyStands(ctx, db, serviceOriginOf(publicUrl), credential, caller.keyId);
  return (await findActiveApiKeyCached(db, credential))?.id === caller.keyId;
}

/** The service's own origin (its hosted chat page) is PUBLIC_URL's. */
function serviceOriginOf(publicUrl: string | undefined): string | undefined {
  return publicUrl === undefined ? undefined : new URL(publicUrl).origin;
}

function bearerCredential(ctx: Koa.Context): string | undefined {
  return /^Bearer ([^\s]+)$/i.exec(ctx.get('Authorization').trim())?.[1];
}

/**
 * An OAuth access token acts as a standard key of the workspace its user chose. Its grant is the key id,
 * so rate limits follow the authorization across refreshes. A token issued for a resource (RFC 8707)
 * works only on requests at or below that resource's path (docs/oauth.md).
 */
async function authenticateAccessToken(ctx: Koa.Context, db: Db, access: Exclude<Access, 'public'>, credential: string): Promise<Caller> {
  const token = await findActiveAccessToken(db, credential);
  if (!token) throw unauthorized('unknown, expired or revoked access token');
  if (!accessTokenCoversPath(token, ctx.path)) throw unauthorized(`this access token was issued for ${token.resource}`);
  if (access === 'management') throw new ApiError('forbidden', 'this operation needs a management key');
  return { tenantId: token.tenantId, keyId: token.grantId, kind: 'standard', userId: token.userId };
}

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message);
}
