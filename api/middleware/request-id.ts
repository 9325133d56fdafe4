import type Koa from 'koa';
import { newId } from '../../db/ids.js';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every response carries X-Request-Id: the caller's own when it sent a sane one, else a new id. */
export async function requestId(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const incoming = ctx.get('X-Request-Id');
  ctx.state.requestId = ACCEPTABLE.test(incoming) ? incoming : newId('req');
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
}
