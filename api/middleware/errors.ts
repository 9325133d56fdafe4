import type Koa from 'koa';
import { ApiError } from '../errors.js';

/** Turns every thrown error into the documented error body; anything unexpected is a logged 500. */
export async function errorBodies(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      throw new ApiError('not_found', `no route for ${ctx.method} ${ctx.path}`);
    }
  } catch (err) {
    const error = err instanceof ApiError ? err : new ApiError('internal', 'internal error');
    if (!(err instanceof ApiError)) {
      console.error(`[api] ${ctx.state.requestId} ${ctx.method} ${ctx.path} failed:`, err);
    }
    ctx.status = error.status;
    ctx.body = error.toBody();
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
    if (error.code === 'unauthorized') ctx.set('WWW-Authenticate', wwwAuthenticate(error.message));
  }
}

function wwwAuthenticate(message: string): string {
  return `Bearer realm="agent-platform", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`;
}
