import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { oauthClock } from './clock.js';
import { resourceCovers, resourcePathCovers } from './resource.js';
import { sha256Hex } from './secrets.js';
import { ACCESS_TOKEN_PREFIX } from './tokens.js';

export { ACCESS_TOKEN_PREFIX };

/** What a live access token stands for. */
export interface ActiveAccessToken {
  tenantId: string;
  /** The grant: the same across refreshes, so it is what rate limits count against. */
  grantId: string;
  userId: string;
  clientId: string;
  scope: string;
  /** The RFC 8707 resource it was issued for, or null for the whole service. */
  resource: string | null;
  /** That resource's path below PUBLIC_URL ('' or '/mcp'), or null. */
  resourcePath: string | null;
  expiresAt: Date;
}

/**
 * Finds the access token with this plaintext if it is live: not expired, its grant not revoked, and its
 * user still a member of the workspace. Like the API-key lookup, it runs before any tenant is known.
 */
export async function findActiveAccessToken(db: Db, token: string): Promise<ActiveAccessToken | undefined> {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
  const row = await db
    .selectFrom('oauth_tokens as t')
    .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
    .innerJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'g.user_id').onRef('m.tenant_id', '=', 'g.tenant_id'))
    .select(['g.tenant_id', 'g.id as grant_id', 'g.user_id', 'g.client_id', 'g.scope', 't.resource', 't.resource_path', 't.expires_at'])
    .where('t.token_hash', '=', sha256Hex(token))
    .where('t.kind', '=', 'access')
    .where('t.expires_at', '>', oauthClock.now())
    .where('g.revoked_at', 'is', null)
    .executeTakeFirst();
  return (
    row && {
      tenantId: row.tenant_id,
      grantId: row.grant_id,
      userId: row.user_id,
      clientId: row.client_id,
      scope: row.scope,
      resource: row.resource,
      resourcePath: row.resource_path,
      expiresAt: row.expires_at,
    }
  );
}

/** Whether the grant is not revoked and its person is still a member of its workspace (what a stream opened with one of its tokens needs to go on). */
export async function grantStands(db: Db, grantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_grants as g')
    .innerJoin('memberships as m', (join) => join.onRef('m.user_id', '=', 'g.user_id').onRef('m.tenant_id', '=', 'g.tenant_id'))
    .select('g.id')
    .where('g.id', '=', grantId)
    .where('g.revoked_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** True when the token may be used on a request to `requestPath` (see resource.ts). */
export function accessTokenCoversPath(token: ActiveAccessToken, requestPath: string): boolean {
  return resourcePathCovers(token.resourcePath, requestPath);
}

/**
 * For a server that knows its own address (the MCP server's `resourceCheck`): true when the request's
 * credential may be used at `resourceUrl`. API keys always may; an access token may when it was issued for
 * no resource, for PUBLIC_URL, or for `resourceUrl` (or an address above it). Run after authenticate().
 */
export async function credentialAllowedAt(db: Db, ctx: Koa.Context, resourceUrl: string): Promise<boolean> {
  const credential = /^Bearer ([^\s]+)$/i.exec(ctx.get('Authorization').trim())?.[1];
  if (!credential?.startsWith(ACCESS_TOKEN_PREFIX)) return true;
  const token = await findActiveAccessToken(db, credential);
  return token !== undefined && resourceCovers(token.resource, resourceUrl);
}
