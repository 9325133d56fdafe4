import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import type { OAuthClientAuthMethod } from '../../db/schema.js';
import { unstorableTextFields } from '../unstorable-text.js';
import { OAuthError } from './oauth-error.js';
import { checkRedirectUri, MAX_REDIRECT_URIS } from './redirect-uris.js';
import { SCOPE } from './scope.js';
import { randomSecret, safeEqual, sha256Hex } from './secrets.js';

/** Dynamically registered clients (RFC 7591) and how they authenticate at the token and revocation endpoints. */

export const SUPPORTED_AUTH_METHODS: OAuthClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];
const CLIENT_SECRET_PREFIX = 'svc_cs_';
const MAX_CLIENT_NAME_LENGTH = 200;

export interface Client {
  id: string;
  name: string;
  redirectUris: string[];
  authMethod: OAuthClientAuthMethod;
  /** True for clients without a secret, which must use PKCE. */
  isPublic: boolean;
}

/**
 * Registers a client from its metadata. Only what the service understands is read; everything else —
 * unknown metadata, and any client_id, client_secret or trust flag the client proposes — is ignored,
 * and the service chooses the id and the secret itself.
 */
export async function registerClient(db: Db, metadata: unknown): Promise<Record<string, unknown>> {
  if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  }
  const fields = metadata as Record<string, unknown>;
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array');
  }
  if (redirectUris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect URIs`);
  const uris = [...new Set(redirectUris.map(checkRedirectUri))];

  const authMethod = fields.token_endpoint_auth_method ?? 'client_secret_basic'; // RFC 7591 §2's default
  if (!SUPPORTED_AUTH_METHODS.includes(authMethod as OAuthClientAuthMethod)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${SUPPORTED_AUTH_METHODS.join(', ')}`);
  }
  requireSubset(fields.grant_types, ['authorization_code', 'refresh_token'], 'grant_types');
  requireSubset(fields.response_types, ['code'], 'response_types');
  const name = clientName(fields.client_name);

  const secret = authMethod === 'none' ? undefined : randomSecret(CLIENT_SECRET_PREFIX);
  const client = await db
    .insertInto('oauth_clients')
    .values({
      id: newId('cli'),
      name,
      redirect_uris: JSON.stringify(uris),
      token_endpoint_auth_method: authMethod as OAuthClientAuthMethod,
      secret_hash: secret ? sha256Hex(secret) : null,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();

  return {
    client_id: client.id,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(new Date(client.created_at).getTime() / 1000),
    client_name: name,
    redirect_uris: uris,
    token_endpoint_auth_method: authMethod,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: SCOPE,
  };
}

export async function findClient(db: Db, clientId: string): Promise<Client | undefined> {
  return (await findClientRow(db, clientId))?.client;
}

async function findClientRow(db: Db, clientId: string): Promise<{ client: Client; secretHash: string | null } | undefined> {
  const row = await db.selectFrom('oauth_clients').selectAll().where('id', '=', clientId).executeTakeFirst();
  if (!row) return undefined;
  const client = {
    id: row.id,
    name: row.name,
    redirectUris: row.redirect_uris,
    authMethod: row.token_endpoint_auth_method,
    isPublic: row.token_endpoint_auth_method === 'none',
  };
  return { client, secretHash: row.secret_hash };
}

/**
 * Authenticates the client of a token or revocation request (RFC 6749 §2.3) by the method it registered:
 * HTTP Basic, client_id and client_secret in the form, or — public clients — client_id alone. Any other
 * combination is invalid_client (401), so a confidential client can never act as a public one.
 */
export async function authenticateClient(db: Db, ctx: Koa.Context, form: Map<string, string>): Promise<Client> {
  const presented = presentedCredentials(ctx, form);
  const reject = (why: string) =>
    new OAuthError('invalid_client', why, 401, presented.method === 'client_secret_basic' ? { 'WWW-Authenticate': 'Basic realm="agent-platform"' } : {});
  const found = await findClientRow(db, presented.clientId);
  if (!found) throw reject('unknown client');
  if (found.client.authMethod !== presented.method) {
    throw reject(`this client authenticates with ${found.client.authMethod}, not ${presented.method}`);
  }
  if (found.secretHash && !safeEqual(sha256Hex(presented.secret ?? ''), found.secretHash)) throw reject('wrong client secret');
  return found.client;
}

function presentedCredentials(ctx: Koa.Context, form: Map<string, string>): { clientId: string; secret?: string; method: OAuthClientAuthMethod } {
  const header = ctx.get('Authorization');
  if (header) {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (!match) throw new OAuthError('invalid_client', 'the Authorization header must be HTTP Basic', 401, { 'WWW-Authenticate': 'Basic realm="agent-platform"' });
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials', 401, { 'WWW-Authenticate': 'Basic realm="agent-platform"' });
    // RFC 6749 §2.3.1: both halves are form-urlencoded before they are joined.
    const clientId = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    // No client id or secret holds U+0000, which Postgres would refuse in the lookup as a 500.
    if (unstorableTextFields('credentials', [clientId, secret]).length > 0) {
      throw new OAuthError('invalid_client', 'malformed Basic credentials', 401, { 'WWW-Authenticate': 'Basic realm="agent-platform"' });
    }
    if (form.has('client_secret')) throw new OAuthError('invalid_request', 'use one client authentication method, not two');
    if (form.has('client_id') && form.get('client_id') !== clientId) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials');
    return { clientId, secret, method: 'client_secret_basic' };
  }
  const clientId = form.get('client_id');
  if (!clientId) throw new OAuthError('invalid_client', 'client authentication is required (client_id missing)', 401);
  const secret = form.get('client_secret');
  return secret === undefined ? { clientId, method: 'none' } : { clientId, secret, method: 'client_secret_post' };
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

function clientName(value: unknown): string {
  if (value === undefined || value === null) return 'Unnamed client';
  if (typeof value !== 'string') throw new OAuthError('invalid_client_metadata', 'client_name must be a string');
  // Control characters, and the bidirectional controls that could make a name read as another
  // (U+202A–202E, U+2066–2069, U+200E/F, U+061C).
  // eslint-disable-next-line no-control-regex -- control characters are what is being removed
  const cleaned = value.replace(/[\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/g, ' ').trim();
  if (!cleaned) return 'Unnamed client';
  if (cleaned.length > MAX_CLIENT_NAME_LENGTH) throw new OAuthError('invalid_client_metadata', `client_name may have at most ${MAX_CLIENT_NAME_LENGTH} characters`);
  return cleaned;
}

function requireSubset(value: unknown, supported: string[], field: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !supported.includes(item))) {
    throw new OAuthError('invalid_client_metadata', `${field} may contain only ${supported.join(', ')}`);
  }
}
