/**
 * Text embeddings: all-MiniLM-L6-v2 (an 8-bit ONNX graph built from the original weights, onnx-community's tokenizer), 384 dimensions,
 * mean pooling, L2-normalized, computed in worker processes so the event loop stays free (pool.ts says why
 * not worker threads: onnxruntime-node 1.21 cannot run in more than one thread per process).
 *
 * - `sharedEmbedder()` — the process-wide embedder (lazy; configured from the environment). Activities
 *   use this one so a process starts its embedding workers (and loads the model) once.
 * - `createEmbedder(options)` — a separate pool (tests, benchmarks, other settings).
 * - Store `embedder.modelId` and `embedder.dtype` with every vector. Vectors go to SQL through the
 *   `pgvector` package (`toSql`, `cosineDistance` from `pgvector/kysely`), which takes plain arrays:
 *   pass `Array.from(vector)`.
 *
 * Environment: `EMBEDDING_MODEL_DIR` (models root; default
 * `${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models`, filled by `npm run fetch-model`),
 * `EMBEDDING_THREADS` (workers, default 2, one on a one-core machine; each holds ~225–245 MB), `EMBEDDING_ALLOW_REMOTE=true` (let
 * Transformers.js download a missing tokenizer or config from the Hugging Face Hub; off by default).
 */
import { WorkerEmbedder, type EmbedderOptions } from './pool.js';

export {
  EMBEDDING_BATCH_SIZE,
  EMBEDDING_DIMENSIONS,
  EMBEDDING_DTYPE,
  EMBEDDING_MAX_TOKENS,
  EMBEDDING_MODEL_ID,
  EMBEDDING_WEIGHTS_SHA256,
  REQUIRED_MODEL_FILES,
  modelFilesFor,
  onnxFileFor,
  embeddingModelsRoot,
  missingModelFiles,
} from './config.js';
export { EmbedderUnavailableError, type EmbedderUnavailableReason } from './errors.js';
export { weightsOf } from './weights-of.js';
export { WorkerEmbedder, type Embedder, type EmbedOptions, type EmbedderOptions, type EmbedderStats } from './pool.js';

/** A new worker pool. Workers start on the first `embed` (or `warmup()`); `close()` stops them. */
export function createEmbedder(options: EmbedderOptions = {}): WorkerEmbedder {
  return new WorkerEmbedder(options);
}

let shared: WorkerEmbedder | undefined;
let sharedClosing: Promise<void> | undefined;

/**
 * The process-wide embedder, created on first use from the environment. Its idle workers do not keep
 * the process alive; `closeSharedEmbedder()` stops them, after which the next call makes a new one.
 */
export function sharedEmbedder(): WorkerEmbedder {
  shared ??= createEmbedder();
  return shared;
}

/** Stops the shared embedder's workers, if it was ever started (for shutdown paths). */
export async function closeSharedEmbedder(): Promise<void> {
  const current = shared;
  shared = undefined;
  if (current) sharedClosing = current.close();
  await sharedClosing;
}
