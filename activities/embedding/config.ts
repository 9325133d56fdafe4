import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { integerSetting } from '../../db/integer-settings.js';

/**
 * The model every vector is made with, as stored beside each vector (with `EMBEDDING_DTYPE`).
 *
 * This is the Transformers.js model id, the folder loaded: onnx-community's export of
 * sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), whose tokenizer and config are used; the dtype
 * says which weight file of that folder made the numbers (`q8`: the 8-bit graph scripts/build-embedder-onnx.py
 * builds from the original weights; `fp32`, its float32 graph, the same function as onnx-community's own
 * fp32 file). Vectors with a
 * different (model id, dtype) pair live in a different space and must not be compared.
 */
export const EMBEDDING_MODEL_ID = 'onnx-community/all-MiniLM-L6-v2-ONNX';
/**
 * The ONNX weights used: `onnx/model_quantized.onnx`, all-MiniLM-L6-v2 in 8-bit arithmetic built from the
 * sentence-transformers weights by scripts/build-embedder-onnx.py (`npm run fetch-model`): each MatMul's
 * input quantized per token, its weights per column, and the hidden state's few outlier channels kept
 * in float32 (the script says why). Its vectors are within cosine 0.999 of the original's (recall@5
 * against it 0.956–0.979, the int8 export's 0.984 in the same run) at 2.2–2.5x the chunks/s of the q4
 * file the platform ran first, and ~1.7x those of the float32 graph it ran before this (`fp32`, the same
 * builder's other output: recall 1.0);
 * onnxruntime's own dynamic 8-bit quantization of that graph had recall 0.85 (`npm run bench --
 * embedder`, docs/performance.md). Vectors stored under earlier weights are re-embedded by the
 * `reembedVectors` workflow (activities/embedding/reembed.ts).
 */
export const EMBEDDING_DTYPE = 'q8';
/**
 * The sha256 of `EMBEDDING_DTYPE`'s ONNX file as `npm run fetch-model` builds it (the script checks the same
 * value). A worker refuses another file under that name — an earlier build's, say — rather than store
 * its vectors under this dtype, where nothing would ever re-embed them.
 */
export const EMBEDDING_WEIGHTS_SHA256 = 'c824d273fd75e53552e8ce6e1bb5840f9f269c990f991379bc1ce1f53eff976a';
export const EMBEDDING_DIMENSIONS = 384;
/**
 * Inputs are truncated to this many tokens (including [CLS] and [SEP]), as sentence-transformers does
 * for this model (`max_seq_length` 256); the tokenizer's own limit (512) is beyond what it was trained on.
 * Longer text is embedded from its beginning only: chunk first (chunks are ~1000 characters).
 */
export const EMBEDDING_MAX_TOKENS = 256;
/**
 * Texts per model call. Requests are queued and cut into (or merged into) batches of this size. One:
 * a batch is padded to its longest text, and a worker of one thread gains nothing from larger calls, so
 * on ~1,000-character chunks single texts embedded 1.07x the chunks/s of batches of 2 and 1.13–1.34x
 * those of 4 (the 8-bit graph, two workers of one thread, `npm run bench -- embedder`), with the least
 * memory (224–243 MB a worker against ~405 MB in batches of 4).
 */
export const EMBEDDING_BATCH_SIZE = 1;

/** Transformers.js' file name suffix of each dtype (its `DEFAULT_DTYPE_SUFFIX_MAPPING`): `q8` is `model_quantized.onnx`. */
const ONNX_FILE_SUFFIX: Record<string, string> = { fp32: '', q8: '_quantized' };

/** The dtypes whose weights sit in an external `.onnx_data` file (the model's config.json says so to Transformers.js). */
const EXTERNAL_DATA_DTYPES = new Set(['fp32', 'fp16', 'q4', 'q4f16']);

/** The ONNX file of one weight variant, relative to the model folder. */
export function onnxFileFor(dtype: string): string {
  return `onnx/model${ONNX_FILE_SUFFIX[dtype] ?? `_${dtype}`}.onnx`;
}

/** The files of one weight variant. */
export function modelFilesFor(dtype: string): string[] {
  const onnx = onnxFileFor(dtype);
  return ['config.json', 'tokenizer.json', 'tokenizer_config.json', onnx, ...(EXTERNAL_DATA_DTYPES.has(dtype) ? [`${onnx}_data`] : [])];
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

/**
 * `EMBEDDING_THREADS`: how many embedding workers (processes, see pool.ts) run; default two, or one on a
 * one-core machine. The 8-bit graph's small kernels keep onnxruntime's threads of one worker waiting on
 * each other: on two cores, two workers of one thread embedded more chunks/s than one worker of two in
 * every run (2.15–2.60x the first setup's rate against 1.10–1.93x; docs/performance.md).
 */
export function embeddingThreadsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('EMBEDDING_THREADS', env) ?? Math.min(2, os.availableParallelism());
}

/**
 * `EMBEDDING_ALLOW_REMOTE=true` lets Transformers.js download missing files from the Hugging Face Hub: the
 * tokenizer and config, and the benchmarks' variants. Not the platform's 8-bit graph, which only
 * `npm run fetch-model` builds: the Hub's `model_quantized.onnx` is another build, and workers refuse it
 * (EMBEDDING_WEIGHTS_SHA256).
 */
export function allowRemoteFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.EMBEDDING_ALLOW_REMOTE?.trim().toLowerCase() === 'true';
}
