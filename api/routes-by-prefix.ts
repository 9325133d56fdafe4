import type Router from '@koa/router';
import type Koa from 'koa';

/**
 * Routers asked only about the paths they have routes under.
 *
 * Why: @koa/router finds a route by testing every route's pattern in turn. The app's routers were
 * mounted one after another, so an API request was tested against ~140 patterns before its handler
 * ran: ~70 µs of the API thread's CPU on a plain `GET`, a tenth of what a bare Koa route spends on the
 * whole request (docs/performance.md).
 *
 * How: each route is filed under its path's leading literal segments, at most two (`/v1/agents/:id`
 * under `/v1/agents`, `/invites/:token` under `/invites`, `/console` under `/console`). A request goes,
 * in the routers' order, to the routers with a route filed under its path's first two segments or its
 * first one; routers that cannot match it are not asked. So that this finds few routes per request,
 * give it small routers (api/router.ts makes one per collection). Segments are compared in lower case,
 * as @koa/router matches paths case-insensitively by default.
 */
export function routesByPrefix(routers: Router[]): Koa.Middleware {
  const filed = new Map<string, Set<Router>>();
  for (const router of routers) {
    for (const layer of router.stack) {
      const prefix = typeof layer.path === 'string' ? literalPrefix(layer.path) : undefined;
      if (prefix === undefined) throw new Error(`routesByPrefix: the route ${layer.path} has no literal first segment to be filed under`);
      if (!filed.has(prefix)) filed.set(prefix, new Set());
      filed.get(prefix)!.add(router);
    }
  }
  // One composed middleware per prefix, made here: a request's own segments never become keys.
  const chains = new Map<string, Koa.Middleware>();
  for (const prefix of filed.keys()) {
    const firstSegment = prefix.split('/', 2).join('/');
    const asked = new Set([...(filed.get(prefix) ?? []), ...(filed.get(firstSegment) ?? [])]);
    chains.set(prefix, inTurn(routers.filter((router) => asked.has(router)).map((router) => router.routes() as Koa.Middleware)));
  }
  return (ctx, next) => {
    const [first, second] = leadingSegments(routeKey(ctx.path));
    const chain = (second !== undefined && chains.get(`/${first}/${second}`)) || chains.get(`/${first}`);
    return chain ? chain(ctx, next) : next();
  };
}

/** The middlewares one after another, as `app.use` would run them, then `next`. */
function inTurn(middlewares: Koa.Middleware[]): Koa.Middleware {
  return middlewares.reduceRight<Koa.Middleware>(
    (rest, middleware) => (ctx, next) => middleware(ctx, () => rest(ctx, next)),
    (_ctx, next) => next(),
  );
}

/** A path as @koa/router compares it by default: in any case, with or without one trailing slash. */
export function routeKey(path: string): string {
  return path.toLowerCase().replace(/(.)\/$/, '$1');
}

/** An operation's path template (`/v1/agents/{id}`) as a pattern over paths in routeKey's form. */
export function templatePattern(openApiPath: string): RegExp {
  return new RegExp(`^${routeKey(openApiPath).replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

/** `/v1/agents/:id` → `/v1/agents`; `/invites/:token` → `/invites`; `/:any` → undefined. */
export function literalPrefix(path: string): string | undefined {
  const literal = [];
  for (const segment of leadingSegments(routeKey(path))) {
    if (segment === undefined || /[:*({]/.test(segment)) break;
    literal.push(segment);
  }
  return literal.length > 0 && literal[0] !== '' ? `/${literal.join('/')}` : undefined;
}

/** The first two segments of an absolute path (`undefined` where it has fewer). */
function leadingSegments(path: string): [string | undefined, string | undefined] {
  const first = path.indexOf('/', 1);
  if (first === -1) return [path.slice(1), undefined];
  const second = path.indexOf('/', first + 1);
  return [path.slice(1, first), path.slice(first + 1, second === -1 ? undefined : second)];
}
