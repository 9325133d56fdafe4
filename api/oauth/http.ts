import type Koa from 'koa';
import { isDatabaseUnreachable } from '../../db/errors.js';
import { unstorableTextParameters } from '../unstorable-text.js';
import { readBodyUpTo } from '../read-body.js';
import { OAuthError } from './oauth-error.js';

/**
 * Request and response plumbing shared by the OAuth endpoints, which speak form-encoded requests and
 * RFC 6749 error bodies rather than the API's JSON conventions.
 */

/** Reads the whole body, refusing more than `limit` bytes with 413. */
export async function readBody(ctx: Koa.Context, limit: number): Promise<Buffer> {
  return readBodyUpTo(ctx, limit, () => new OAuthError('invalid_request', `the request body is limited to ${limit} bytes`, 413));
}

/**
 * An `application/x-www-form-urlencoded` body as single values. RFC 6749 §3.1 forbids repeating a
 * parameter, so a repeated one is an invalid_request rather than a silent pick of one of them; so is
 * one holding U+0000, which no parameter has a use for and Postgres cannot store.
 */
export async function readForm(ctx: Koa.Context, limit = 64 * 1024): Promise<Map<string, string>> {
  const body = await readBody(ctx, limit);
  if (body.length > 0 && !ctx.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
  }
  return singleValues(new URLSearchParams(body.toString('utf8')));
}

/**
 * A browser page's form (the consent and invite pages), or undefined when the body is not a readable
 * form: too large, another content type, or a field holding U+0000 (Postgres cannot store it, and no
 * field has a use for it). The page then answers its own error page. Repeated fields keep their first value.
 */
export async function readPageForm(ctx: Koa.Context, limit = 16 * 1024): Promise<URLSearchParams | undefined> {
  try {
    const body = await readBody(ctx, limit);
    if (!ctx.is('application/x-www-form-urlencoded')) return undefined;
    const form = new URLSearchParams(body.toString('utf8'));
    return unstorableTextParameters(form).length > 0 ? undefined : form;
  } catch {
    return undefined;
  }
}

export function singleValues(params: URLSearchParams): Map<string, string> {
  const values = new Map<string, string>();
  const unstorable = unstorableTextParameters(params);
  if (unstorable.length > 0) throw new OAuthError('invalid_request', `parameter '${unstorable[0]}' contains U+0000 or a lone surrogate`);
  for (const [name, value] of params) {
    if (values.has(name)) throw new OAuthError('invalid_request', `parameter '${name}' is repeated`);
    values.set(name, value);
  }
  return values;
}

/**
 * Runs an OAuth JSON endpoint: answers its result, or its OAuthError as an RFC 6749 error body;
 * anything unexpected is logged and answered as server_error. Nothing here may be cached.
 */
export async function oauthJson(ctx: Koa.Context, handle: () => Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  allowAnyOrigin(ctx);
  try {
    const reply = await handle();
    ctx.status = reply.status;
    ctx.body = reply.body ?? '';
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  } catch (err) {
    const error = err instanceof OAuthError ? err : unexpected(ctx, err);
    ctx.status = error.status;
    ctx.body = error.toBody();
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  }
}

/**
 * Browser-based clients (MCP inspectors, single-page apps) call discovery, registration, token and
 * revocation from another origin. None of them reads cookies, so any origin may.
 */
export function allowAnyOrigin(ctx: Koa.Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After');
}

/** The CORS preflight for the endpoints above. */
export function corsPreflight(ctx: Koa.Context): void {
  allowAnyOrigin(ctx);
  ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
  ctx.set('Access-Control-Max-Age', '86400');
  ctx.status = 204;
}

/** An unreachable database is RFC 6749's temporarily_unavailable (503, retry); anything else a logged server_error. */
function unexpected(ctx: Koa.Context, err: unknown): OAuthError {
  if (isDatabaseUnreachable(err)) {
    console.error(`[oauth] ${ctx.state.requestId} ${ctx.method} ${ctx.path}: the database is unreachable (${(err as Error).message})`);
    return new OAuthError('temporarily_unavailable', 'the service is briefly unavailable; retry shortly', 503, { 'Retry-After': '5' });
  }
  console.error(`[oauth] ${ctx.state.requestId} ${ctx.method} ${ctx.path} failed:`, err);
  return new OAuthError('server_error', 'internal error', 500);
}
