import type Koa from 'koa';

/**
 * The whole request body, refused with `tooLarge()` as soon as it declares (Content-Length) or reaches
 * more than `limit` bytes; the connection is then dropped rather than read to its end.
 */
export async function readBodyUpTo(ctx: Koa.Context, limit: number, tooLarge: () => Error): Promise<Buffer> {
  if (Number(ctx.get('Content-Length') || 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
