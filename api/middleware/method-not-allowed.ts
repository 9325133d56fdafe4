import type Router from '@koa/router';
import type Koa from 'koa';
import { ApiError } from '../errors.js';

/**
 * RFC 9110 §15.5.6: a method a known path does not have is a 405 naming the methods it has in `Allow`
 * (in the API's error body), not the 404 of an unknown path. `OPTIONS` on a known path that does not
 * handle it itself answers 204 with the same `Allow`. Mount before `routers`, which it asks after they
 * have had their turn; `/mcp` answers its own methods (api/mcp/endpoint.ts).
 */
export function methodNotAllowed(routers: Router[]): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const layers = routers.flatMap((router) => router.match(ctx.path, ctx.method).path);
    // A concrete path (`/v1/memory/search`) takes precedence over a template that matches it too (`/v1/memory/:id`).
    const concrete = layers.filter((layer) => layer.paramNames.length === 0);
    const methods = new Set((concrete.length > 0 ? concrete : layers).flatMap((layer) => layer.methods));
    if (methods.size === 0) return;
    methods.add('OPTIONS');
    const allow = [...methods].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new ApiError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, {}, { Allow: allow });
  };
}
