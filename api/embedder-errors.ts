import { EmbedderUnavailableError } from '../activities/embedding/errors.js';
import { ApiError } from './errors.js';

/**
 * Runs an embedding step; its failure is the 502 `upstream_error` the spec names, with nothing written.
 * The embedder's own message names files on the server (the model directory, stack frames), so the
 * caller gets only what kind of failure it was and the details go to the server log.
 */
export async function embedding<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    console.error('[api] the embedder failed:', err);
    throw new ApiError('upstream_error', `the embedder failed (${failureKind(err)}); the details are in the server log`);
  }
}

function failureKind(err: unknown): string {
  if (!(err instanceof EmbedderUnavailableError)) return 'embedding_error';
  return err.reason === 'model_missing' ? 'model_missing: the operator must run `npm run fetch-model`' : err.reason;
}
