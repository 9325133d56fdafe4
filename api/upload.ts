import busboy from 'busboy';
import type Koa from 'koa';
import { ApiError } from './errors.js';
import { multipartBoundary, PartContentTypeTap } from './part-content-type.js';
import { unstorableTextFields } from './unstorable-text.js';

/** Uploaded files are limited to 4 MB (the spec's Limits). */
export const UPLOAD_LIMIT_BYTES = 4 * 1024 * 1024;
/** Room for the multipart framing and small fields around the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface UploadedFile {
  filename: string;
  contentType: string | undefined;
  bytes: Buffer;
  /** The other text fields of the form. */
  fields: Record<string, string>;
}

/**
 * Reads a `multipart/form-data` body with one file in `fieldName`. A body that declares more than the
 * limit is refused before any of it is read; a file that turns out larger is refused as soon as it
 * crosses the limit, so at most 4 MB is ever held in memory.
 */
export async function readUpload(ctx: Koa.Context, fieldName = 'file'): Promise<UploadedFile> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > UPLOAD_LIMIT_BYTES + MULTIPART_OVERHEAD_BYTES) throw tooLarge();

  return new Promise<UploadedFile>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // One byte over the limit, so a file of exactly the limit passes and the next byte trips `limit`.
      parser = busboy({ headers: ctx.req.headers, limits: { fileSize: UPLOAD_LIMIT_BYTES + 1, files: 1, fields: 20, fieldSize: 64 * 1024 } });
    } catch (err) {
      reject(new ApiError('invalid_request', `malformed multipart body: ${(err as Error).message}`, { fields: [] }));
      return;
    }
    const fields: Record<string, string> = {};
    let file: Omit<UploadedFile, 'fields'> | undefined;
    let failed = false;
    // busboy validated the boundary above.
    const declaredTypes = new PartContentTypeTap(multipartBoundary(ctx.get('Content-Type'))!);
    // A client that goes away mid-upload: pipe() would never end the parser, and this would never settle.
    const cutOff = () => fail(new ApiError('invalid_request', 'the upload was cut off before its end', { fields: [] }));
    const fail = (error: ApiError) => {
      if (failed) return;
      failed = true;
      declaredTypes.stop();
      ctx.req.off('data', declaredTypes.take);
      ctx.req.unpipe(parser);
      stopReading(ctx, declared > 0);
      reject(error);
    };

    parser.on('field', (name, value, info) => {
      // busboy cuts a value at `fieldSize` and says so: a cut title would be stored as if whole.
      if (info.valueTruncated) fail(new ApiError('invalid_request', `the form field "${name}" is longer than 64 KB`, { fields: [{ field: `body.${name}`, message: 'is longer than 64 KB' }] }));
      else fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== fieldName) {
        // busboy takes one file: the form's own never comes, and nothing more need be kept for it.
        declaredTypes.stop();
        stream.resume();
        return;
      }
      // The part's Content-Type as sent: busboy's `mimeType` lacks its `charset=`.
      const contentType = declaredTypes.contentTypeOf(name) ?? info.mimeType;
      ctx.req.off('data', declaredTypes.take);
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > UPLOAD_LIMIT_BYTES) fail(tooLarge());
        else chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => {
        if (!failed) file = { filename: info.filename ?? 'upload', contentType, bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('error', (err: Error) => fail(new ApiError('invalid_request', `malformed multipart body: ${err.message}`, { fields: [] })));
    parser.on('close', () => {
      ctx.req.off('aborted', cutOff);
      ctx.req.off('error', cutOff);
      if (failed) return;
      if (!file) {
        reject(new ApiError('invalid_request', `the form has no file in the "${fieldName}" field`, { fields: [{ field: `body.${fieldName}`, message: 'is required' }] }));
        return;
      }
      const unstorable = [...unstorableTextFields('body', fields), ...unstorableTextFields('body.file', file.filename)];
      if (unstorable.length > 0) {
        reject(new ApiError('invalid_request', 'the form has a field with text that cannot be stored (U+0000 or a lone surrogate)', { fields: unstorable }));
        return;
      }
      resolve({ ...file, fields });
    });
    // Before the pipe's own listener, so that the tap has each chunk before the parser reads it.
    ctx.req.on('data', declaredTypes.take);
    ctx.req.once('aborted', cutOff);
    ctx.req.once('error', cutOff);
    ctx.req.pipe(parser);
  });
}

/**
 * After a refusal the rest of the body is not read. A declared length was checked above, so draining
 * it is bounded and lets the client read the answer on a connection that then closes; a body of no
 * declared length (chunked) could go on forever, so its connection is dropped at once, as the JSON
 * path does.
 */
function stopReading(ctx: Koa.Context, lengthDeclared: boolean): void {
  ctx.set('Connection', 'close');
  if (lengthDeclared) ctx.req.resume();
  else ctx.req.destroy();
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `uploaded files are limited to ${UPLOAD_LIMIT_BYTES} bytes (4 MB)`);
}
