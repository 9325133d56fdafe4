import type Koa from 'koa';
import { isDatabaseUnreachable } from '../../db/errors.js';
import { ApiError } from '../errors.js';

/** Seconds a client is asked to wait while the database is unreachable (a restart takes a few). */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Turns every thrown error into the documented error body; anything unexpected is a logged 500. */
export async function errorBodies(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      throw new ApiError('not_found', `no route for ${ctx.method} ${ctx.path}`);
    }
  } catch (err) {
    const error = err instanceof ApiError ? err : unexpected(ctx, err);
    ctx.status = error.status;
    ctx.body = error.toBody();
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
    if (error.code === 'unauthorized') ctx.set('WWW-Authenticate', wwwAuthenticate(error.message));
  }
}

/**
 * A database that cannot be reached is a 503 the client may retry (logged in one line: a restart would
 * otherwise log a stack per request); anything else unexpected is a logged 500.
 */
function unexpected(ctx: Koa.Context, err: unknown): ApiError {
  if (isDatabaseUnreachable(err)) {
    console.error(`[api] ${ctx.state.requestId} ${ctx.method} ${ctx.path}: the database is unreachable (${(err as Error).message})`);
    return new ApiError('unavailable', 'the database is unreachable; retry shortly', {}, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
  }
  console.error(`[api] ${ctx.state.requestId} ${ctx.method} ${ctx.path} failed:`, err);
  return new ApiError('internal', 'internal error');
}

function wwwAuthenticate(message: string): string {
  return `Bearer realm="agent-platform", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`;
}
