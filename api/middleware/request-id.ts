import type Koa from 'koa';
import { randomUUID } from 'node:crypto';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Every response carries X-Request-Id: the caller's own when it sent a sane one, else a new random one.
 * Not a time-ordered id like the resources': those made in the same millisecond count up, so a request
 * id would tell any caller the neighbours of the ids it is about to be given.
 */
export function requestId(ctx: Koa.Context, next: Koa.Next): Promise<unknown> {
  const incoming = ctx.get('X-Request-Id');
  ctx.state.requestId = ACCEPTABLE.test(incoming) ? incoming : `req_${randomUUID()}`;
  ctx.set('X-Request-Id', ctx.state.requestId);
  return next();
}
