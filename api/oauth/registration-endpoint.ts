import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { clientAddress } from '../client-address.js';
import { registerClient } from './clients.js';
import { unstorableTextFields } from '../unstorable-text.js';
import { readBody } from './http.js';
import { OAuthError } from './oauth-error.js';
import { REGISTRATIONS_OVERALL, REGISTRATIONS_PER_ADDRESS, takeAttempt } from './rate-limit.js';

/** Client metadata is a few hundred bytes; anything near this limit is not a client registering. */
export const REGISTRATION_BODY_LIMIT = 16 * 1024;

/** POST /oauth/register (RFC 7591): open dynamic registration, limited per client address and overall. */
export async function registrationEndpoint(ctx: Koa.Context, db: Db): Promise<{ status: number; body: Record<string, unknown> }> {
  for (const [limit, subject] of [
    [REGISTRATIONS_PER_ADDRESS, clientAddress(ctx.ip)],
    [REGISTRATIONS_OVERALL, '*'],
  ] as const) {
    const wait = await takeAttempt(db, limit, subject);
    if (wait > 0) {
      throw new OAuthError('temporarily_unavailable', `too many registrations; retry in ${wait} s`, 429, { 'Retry-After': String(wait) });
    }
  }
  const body = await readBody(ctx, REGISTRATION_BODY_LIMIT);
  if (!ctx.is('application/json', '+json')) throw new OAuthError('invalid_client_metadata', 'the body must be application/json');
  let metadata: unknown;
  try {
    metadata = JSON.parse(body.toString('utf8'));
  } catch {
    throw new OAuthError('invalid_client_metadata', 'the body is not valid JSON');
  }
  const [unstorable] = unstorableTextFields('metadata', metadata);
  if (unstorable) throw new OAuthError('invalid_client_metadata', `${unstorable.field} ${unstorable.message}`);
  return { status: 201, body: await registerClient(db, metadata) };
}
