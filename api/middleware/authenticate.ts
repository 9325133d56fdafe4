import type Koa from 'koa';
import { API_KEY_PREFIX, findActiveApiKey } from '../../db/api-keys.js';
import type { Db } from '../../db/database.js';
import { ApiError } from '../errors.js';
import type { Access, Caller } from '../operation.js';

/** Resolves the request's bearer credential to a caller, or throws 401/403 as the access level demands. */
export async function authenticate(ctx: Koa.Context, db: Db, access: Exclude<Access, 'public'>): Promise<Caller> {
  const header = ctx.get('Authorization');
  if (!header) throw unauthorized('missing Authorization header');
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match) throw unauthorized('Authorization header must be "Bearer <credential>"');
  const credential = match[1]!;
  if (!credential.startsWith(API_KEY_PREFIX)) throw unauthorized(`credential must start with ${API_KEY_PREFIX}`);

  const key = await findActiveApiKey(db, credential);
  if (!key) throw unauthorized('unknown or revoked credential');
  if (access === 'management' && key.kind !== 'management') {
    throw new ApiError('forbidden', 'this operation needs a management key');
  }
  return { tenantId: key.tenant_id, keyId: key.id, kind: key.kind };
}

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message);
}
