import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type Koa from 'koa';

/**
 * Routers asked only about the paths they have routes under, their routes dispatched here.
 *
 * Why: @koa/router finds a route by testing every route's pattern in turn. The app's routers were
 * mounted one after another, so an API request was tested against ~140 patterns before its handler
 * ran (docs/performance.md). A router's own dispatch also builds, on every request, the list
 * of the routes that match, a closure for each and a koa-compose chain of them; the routes here are
 * plain (a method, a path, handlers), so each one's handlers are composed once, here.
 *
 * How: each route is filed under its path's leading literal segments, at most two (`/v1/agents/:id`
 * under `/v1/agents`, `/invites/:token` under `/invites`, `/console` under `/console`). A request is
 * offered, in the routers' order, the routes filed under its path's first two segments or its first
 * one. The first whose method and pattern match runs with `ctx.params` set as @koa/router sets it (the
 * match's other fields, `ctx.captures`, `ctx.routerPath` and the like, are not set), and its `next`
 * offers the request to the routes after it, then to the middleware after this one: what the routers
 * mounted one after another would do (and, as there, a second call of a `next` is refused). Paths match regardless of case and of a trailing slash, as
 * @koa/router matches by default. Routers with a prefix, a host, the `exclusive` or `routerPath`
 * options, `use` middleware or `param` handlers are refused: dispatching those is @koa/router's job.
 * Routes are read once, here: one added to a router afterwards is never offered a request.
 */
export function routesByPrefix(routers: Router[]): Koa.Middleware {
  const routes = routers.flatMap((router) => {
    const { prefix, host, exclusive, routerPath } = router.opts;
    if (prefix || host !== undefined || exclusive || routerPath !== undefined || Object.keys(router.params).length > 0) {
      throw new Error('routesByPrefix: a router with a prefix, a host, exclusive or routerPath options or param handlers needs its own dispatch');
    }
    return router.stack.map(plainRoute);
  });
  // One list per prefix, made here: a request's own segments never become keys.
  const lists = new Map<string, PlainRoute[]>();
  for (const { prefix } of routes) {
    const firstSegment = prefix.split('/', 2).join('/');
    lists.set(prefix, routes.filter((route) => route.prefix === prefix || route.prefix === firstSegment));
  }
  return (ctx, next) => {
    const [first, second] = leadingSegments(routeKey(ctx.path));
    const list = (second !== undefined && lists.get(`/${first}/${second}`)) || lists.get(`/${first}`);
    return list ? dispatchFrom(list, 0, ctx, next) : next();
  };
}

interface PlainRoute {
  prefix: string;
  layer: Layer;
  handle: Koa.Middleware;
}

function plainRoute(layer: Layer): PlainRoute {
  const prefix = typeof layer.path === 'string' ? literalPrefix(layer.path) : undefined;
  if (prefix === undefined) throw new Error(`routesByPrefix: the route ${String(layer.path)} has no literal first segment to be filed under`);
  if (layer.methods.length === 0) throw new Error(`routesByPrefix: ${layer.path} is \`use\` middleware, not a route`);
  const stack = layer.stack as Koa.Middleware[];
  return { prefix, layer, handle: stack.length === 1 ? stack[0]! : inTurn(stack) };
}

/** Runs the first of `routes[from…]` the request matches; its `next` offers the request to the ones after it. */
function dispatchFrom(routes: PlainRoute[], from: number, ctx: Koa.Context, next: Koa.Next): Promise<unknown> {
  const path = ctx.path;
  for (let i = from; i < routes.length; i++) {
    const { layer, handle } = routes[i]!;
    if (!layer.methods.includes(ctx.method) || !layer.match(path)) continue;
    ctx.params = layer.params(path, layer.captures(path), ctx.params);
    return promiseOf(() => handle(ctx, once(() => dispatchFrom(routes, i + 1, ctx, next))));
  }
  return next();
}

/** The middlewares one after another, as `app.use` would run them, then `next`. */
function inTurn(middlewares: Koa.Middleware[]): Koa.Middleware {
  return middlewares.reduceRight<Koa.Middleware>(
    (rest, middleware) => (ctx, next) => promiseOf(() => middleware(ctx, once(() => rest(ctx, next)))),
    (_ctx, next) => next(),
  );
}

/**
 * A middleware's `next`, refused the second time as koa-compose refuses it: called twice it would run
 * the routes (and the middleware) after it twice, writing one response two ways.
 */
function once(next: () => Promise<unknown>): () => Promise<unknown> {
  let called = false;
  return () => {
    if (called) return Promise.reject(new Error('next() called multiple times'));
    called = true;
    return next();
  };
}

/** A promise whatever a middleware does, as koa-compose gives: a rejection for a throw, not a throw. */
function promiseOf(run: () => unknown): Promise<unknown> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err);
  }
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
