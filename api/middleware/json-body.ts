import type Koa from 'koa';
import { ApiError } from '../errors.js';
import { readBodyUpTo } from '../read-body.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Reads and parses a JSON request body of at most JSON_BODY_LIMIT bytes. An empty body reads as
 * undefined, so a missing body meets the schema's `required` rather than a parse error.
 */
export async function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  return parseJsonBody(ctx, await readBodyBytes(ctx));
}

/** `readJsonBody` for a body already read (an inbound channel message, whose signature covers the raw bytes). */
export function parseJsonBody(ctx: Koa.Context, bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new ApiError('unsupported_media_type', 'request body must be application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_request', `malformed JSON body: ${(err as Error).message}`, { fields: [] });
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new ApiError('invalid_request', `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`, { fields: [] });
  }
  return body;
}

/**
 * How deep arrays and objects may nest. JSON.parse takes far deeper text than JSON.stringify (a stack
 * overflow) or Postgres' jsonb (its stack depth limit) can handle afterwards, which would be a 500.
 */
export const MAX_JSON_DEPTH = 64;

/** True when arrays and objects nest deeper than `limit` in a parsed JSON value. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return nestingDepth(value, limit) > limit;
}

/** The nesting depth of a parsed JSON value, counted without recursion and given up beyond `limit`. */
function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The raw request body, refused with 413 as soon as it declares or reaches more than JSON_BODY_LIMIT bytes. */
export async function readBodyBytes(ctx: Koa.Context): Promise<Buffer> {
  return readBodyUpTo(ctx, JSON_BODY_LIMIT, tooLarge);
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `JSON bodies are limited to ${JSON_BODY_LIMIT} bytes`);
}
