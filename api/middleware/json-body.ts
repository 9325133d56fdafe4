import type Koa from 'koa';
import { ApiError } from '../errors.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Reads and parses a JSON request body of at most JSON_BODY_LIMIT bytes. An empty body reads as
 * undefined, so a missing body meets the schema's `required` rather than a parse error.
 */
export async function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  const bytes = await readBodyBytes(ctx);
  if (bytes.length === 0) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new ApiError('unsupported_media_type', 'request body must be application/json');
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_request', `malformed JSON body: ${(err as Error).message}`, { fields: [] });
  }
}

/** The raw request body, refused with 413 as soon as it declares or reaches more than JSON_BODY_LIMIT bytes. */
export async function readBodyBytes(ctx: Koa.Context): Promise<Buffer> {
  if (Number(ctx.get('Content-Length') || 0) > JSON_BODY_LIMIT) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > JSON_BODY_LIMIT) {
      ctx.req.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `JSON bodies are limited to ${JSON_BODY_LIMIT} bytes`);
}
