import { ApiError } from './errors.js';

/** Runs an embedding step; its failure is the 502 `upstream_error` the spec names, with nothing written. */
export async function embedding<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new ApiError('upstream_error', `the embedder failed: ${reason}`);
  }
}
