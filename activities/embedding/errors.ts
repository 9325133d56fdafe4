/** Why the embedder could not answer. */
export type EmbedderUnavailableReason =
  /** The model files are not on disk (run `npm run fetch-model`). */
  | 'model_missing'
  /** A worker could not load the model (corrupt files, runtime error). */
  | 'load_failed'
  /** A worker thread died while it held the request's texts; it is replaced for later requests. */
  | 'worker_crashed'
  /** `close()` was called. */
  | 'closed';

/**
 * The embedder cannot produce vectors right now. The request did not get a (partial) answer; a later
 * request may succeed (after `npm run fetch-model`, or on the replacement of a crashed worker).
 * Invalid input is a `TypeError` instead, never this.
 */
export class EmbedderUnavailableError extends Error {
  override readonly name = 'EmbedderUnavailableError';
  readonly code = 'embedder_unavailable';

  constructor(
    readonly reason: EmbedderUnavailableReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
