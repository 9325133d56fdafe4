import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { isOriginOfAnyDeployment } from '../../db/deployments.js';
import type { AnyOperation } from '../operation.js';
import { routeKey, templatePattern } from '../routes-by-prefix.js';
import { allowOrigin } from './publishable-key.js';

/**
 * CORS preflights for the operations a publishable key may call. A preflight carries no credential, so
 * it is allowed for an origin some deployment lists; the request itself is then checked against its own
 * key's deployment (api/deployments/publishable-key.ts), and refused with no CORS headers when the
 * origin is not that deployment's. Any other preflight falls through (no CORS headers).
 */
export function deploymentPreflight(operations: AnyOperation[], db: Db): Koa.Middleware {
  const publishable = operations.filter((operation) => operation.publishable);
  const templates = publishable.map((operation) => ({
    method: operation.method.toUpperCase(),
    path: templatePattern(operation.path),
  }));
  // Not async on the way past: every request comes through here, and only preflights stop.
  return (ctx, next) => (ctx.method === 'OPTIONS' ? preflight(ctx, next) : next());

  async function preflight(ctx: Koa.Context, next: Koa.Next): Promise<unknown> {
    const origin = ctx.get('Origin');
    const method = ctx.get('Access-Control-Request-Method').toUpperCase();
    if (!origin || !method) return next();
    // The path as routing compares it: the request that follows reaches the operation in any case.
    const path = routeKey(ctx.path);
    const allowed = templates.filter((t) => t.path.test(path)).map((t) => t.method);
    if (!allowed.includes(method) || !(await isOriginOfAnyDeployment(db, origin))) return next();
    allowOrigin(ctx, origin);
    ctx.set('Access-Control-Allow-Methods', [...new Set(allowed)].join(', '));
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, Last-Event-ID, X-Visitor-Token');
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
  }
}
