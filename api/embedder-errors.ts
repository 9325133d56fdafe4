import { EmbedderUnavailableError } from '../activities/embedding/errors.js';
import type { Embedder } from '../activities/embedding/pool.js';
import { ApiError } from './errors.js';

/**
 * The embedder as a request sees it: a failure of `embed` is the 502 `upstream_error` the spec names
 * (raised before anything is written, as callers embed first). Only the embedder is wrapped, so a
 * database failure around it stays a 500 of ours rather than being blamed on the embedder. The
 * embedder's own message names files on the server (the model directory, stack frames), so the caller
 * gets only what kind of failure it was and the details go to the server log.
 */
export function upstreamEmbedder(embedder: Embedder): Embedder {
  return {
    get modelId() {
      return embedder.modelId;
    },
    get dtype() {
      return embedder.dtype;
    },
    dimensions: embedder.dimensions,
    embed: async (texts, options) => {
      try {
        return await embedder.embed(texts, options);
      } catch (err) {
        console.error('[api] the embedder failed:', err);
        throw new ApiError('upstream_error', `the embedder failed (${failureKind(err)}); the details are in the server log`);
      }
    },
    close: () => embedder.close(),
  };
}

function failureKind(err: unknown): string {
  if (!(err instanceof EmbedderUnavailableError)) return 'embedding_error';
  return err.reason === 'model_missing' ? 'model_missing: the operator must run `npm run fetch-model`' : err.reason;
}
