import Router from '@koa/router';
import type Koa from 'koa';
import { readAsTenant } from '../db/tenant-reads.js';
import { withTenant } from '../db/tenant-transaction.js';
import type { AppDeps } from './deps.js';
import { authenticate } from './middleware/authenticate.js';
import { readJsonBody } from './middleware/json-body.js';
import { ApiError } from './errors.js';
import { bodyIsOptional, type Access, type AnyOperation, type Caller } from './operation.js';
import { literalPrefix, routeKey, templatePattern } from './routes-by-prefix.js';
import { requestValidator } from './validation.js';

/**
 * Mounts every operation — authenticate, read and validate the request, run the handler — on one router
 * per collection: the operations whose paths share their leading literal segments (`/v1/agents`), in
 * their order, for api/routes-by-prefix.ts to ask only the one a request's path is under.
 */
export function buildRouters(operations: AnyOperation[], deps: AppDeps): Router[] {
  const routers = new Map<string, Router>();
  for (const operation of operations) {
    const path = koaPath(operation.path);
    const prefix = literalPrefix(path)!;
    if (!routers.has(prefix)) routers.set(prefix, new Router());
    const router = routers.get(prefix)!;
    const concrete = concretePathsShadowedBy(operation.path, operations);
    const validateParams = requestValidator('params', operation.params ?? { type: 'object' });
    const validateQuery = requestValidator('query', operation.query ?? { type: 'object', additionalProperties: false });
    const validateBody = operation.body && requestValidator('body', operation.body);
    const absentBody = bodyIsOptional(operation.body) ? () => ({}) : () => undefined;

    router[operation.method](path, async (ctx: Koa.Context, next: Koa.Next) => {
      // OpenAPI matches a concrete path before a templated one: PATCH /v1/memory/search is not PATCH
      // /v1/memory/{id} but a method /v1/memory/search lacks (405).
      if (concrete.has(routeKey(ctx.path))) return next();
      const caller = operation.access === 'public' ? undefined : await callerOf(ctx, deps, operation);

      const params = { ...ctx.params };
      validateParams(params);
      const query = { ...ctx.query };
      validateQuery(query);
      let body: unknown;
      if (validateBody) {
        body = await readJsonBody(ctx);
        if (body === undefined) body = absentBody();
        validateBody(body);
      }

      const reply = await operation.handler({
        params,
        query,
        body,
        deps,
        koa: ctx,
        get caller(): Caller {
          if (!caller) throw new Error(`${operation.operationId} is public and has no caller`);
          return caller;
        },
        tenant: (work) => withTenant(deps.db, caller!.tenantId, work),
        tenantReads: (work) => readAsTenant(deps.db, caller!.tenantId, work),
      });
      ctx.status = reply.status;
      if (reply.body !== undefined) ctx.body = reply.body;
      for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
    });
  }
  return [...routers.values()];
}

/**
 * The request's caller: the bearer credential's, or, for a tool call `/mcp` dispatched to this router,
 * the caller `/mcp` already authenticated (api/mcp/internal-router.ts).
 */
async function callerOf(ctx: Koa.Context, deps: AppDeps, operation: AnyOperation): Promise<Caller> {
  const access = operation.access as Exclude<Access, 'public'>;
  const dispatched = ctx.state.dispatchedCaller as Caller | undefined;
  if (!dispatched) return authenticate(ctx, deps.db, access, { publishable: operation.publishable === true, publicUrl: deps.publicUrl });
  if (access === 'management' && dispatched.kind !== 'management') throw new ApiError('forbidden', 'this operation needs a management key');
  return dispatched;
}

/** The paths without parameters that the template `path` also matches, e.g. `/v1/memory/search` for `/v1/memory/{id}`. */
function concretePathsShadowedBy(path: string, operations: AnyOperation[]): Set<string> {
  if (!path.includes('{')) return new Set();
  const template = templatePattern(path);
  return new Set(operations.map((o) => routeKey(o.path)).filter((other) => !other.includes('{') && template.test(other)));
}

/** `/v1/agents/{id}` → `/v1/agents/:id` */
function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}
