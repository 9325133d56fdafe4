/**
 * One embedding worker process (forked by pool.ts with an IPC channel, never imported): loads the
 * Transformers.js tokenizer and model once, sends `ready` (or `load-error` and exits), then
 * answers `embed` messages one at a time with mean-pooled, L2-normalized vectors. It exits when the
 * channel to its parent closes, so it never outlives the process that started it, and ignores
 * SIGINT and SIGTERM (the pool stops it with SIGKILL).
 */
import {
  AutoModel,
  AutoTokenizer,
  env,
  mean_pooling,
  type DataType,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  type Tensor,
} from '@huggingface/transformers';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { EmbeddingWorkerConfig, EmbedRequestMessage, WorkerMessage } from './protocol.js';

if (!process.send) throw new Error('embedding-worker.js runs as a child process forked by activities/embedding/pool.js');
const config = JSON.parse(process.argv[2] ?? '{}') as EmbeddingWorkerConfig;

function post(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    // An error here means the parent is gone; the `disconnect` handler ends this process.
    process.send!(message, undefined, {}, () => resolve());
  });
}

function describe(error: unknown): { message: string; stack?: string } {
  return error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
}

process.on('disconnect', () => process.exit(0));
// Ctrl-C or a service manager signals the whole process group; the parent decides when this worker
// stops (it may still be finishing activities), and the closed channel ends it when the parent exits.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

env.allowLocalModels = true;
env.localModelPath = config.modelsRoot;
env.allowRemoteModels = config.allowRemote;
if (config.allowRemote) {
  // Downloads land where local models are read from (same `<root>/<model id>/<file>` layout).
  env.cacheDir = config.modelsRoot;
  env.useFSCache = true;
}

interface Embedding {
  tokenizer: PreTrainedTokenizer;
  model: PreTrainedModel;
  /** The tokenizer's [SEP] id, as the int64 the model's inputs hold. */
  sep: bigint;
}

/** Throws unless the ONNX file is the build this version runs (EMBEDDING_WEIGHTS_SHA256 says why). */
async function checkWeights(expected: NonNullable<EmbeddingWorkerConfig['expectedWeights']>): Promise<void> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(expected.path)) hash.update(chunk as Buffer);
  const actual = hash.digest('hex');
  if (actual !== expected.sha256) {
    throw new Error(`${expected.path} has sha256 ${actual}, not the ${expected.sha256} of the weights this version runs`);
  }
}

async function load(): Promise<Embedding> {
  if (config.expectedWeights) await checkWeights(config.expectedWeights);
  const [tokenizer, model] = await Promise.all([
    AutoTokenizer.from_pretrained(config.modelId),
    AutoModel.from_pretrained(config.modelId, {
      dtype: config.dtype as DataType,
      // Without onnxruntime's CPU arena a worker stays ~90 MB smaller after long batches (measured:
      // ~330 MB instead of ~430 MB after 16 × 256-token batches) at no measurable cost in speed.
      session_options: { intraOpNumThreads: config.intraOpThreads, interOpNumThreads: 1, enableCpuMemArena: false },
    }),
  ]);
  tokenizer.model_max_length = Math.min(config.maxTokens, tokenizer.model_max_length ?? Infinity);
  if (tokenizer.sep_token_id === undefined) throw new Error(`the tokenizer of ${config.modelId} has no [SEP] token`);
  return { tokenizer, model, sep: BigInt(tokenizer.sep_token_id) };
}

/**
 * Tokenizes as sentence-transformers does. Transformers.js truncates after adding the special tokens,
 * so a text longer than the limit loses its final [SEP] ([CLS] + 255 word pieces); the original keeps
 * it ([CLS] + 254 + [SEP]). A row of full length therefore ends in [SEP] — for a text that fit
 * exactly, it already did.
 */
function tokenize({ tokenizer, sep }: Embedding, texts: string[]): Record<string, Tensor> {
  const inputs = tokenizer(texts, { padding: true, truncation: true }) as Record<string, Tensor>;
  const ids = inputs.input_ids!;
  const [rows, length] = ids.dims as [number, number];
  if (length === tokenizer.model_max_length) {
    const data = ids.data as BigInt64Array;
    const mask = inputs.attention_mask!.data as BigInt64Array;
    for (let row = 0; row < rows; row++) {
      const last = row * length + length - 1;
      if (mask[last] === 1n) data[last] = sep;
    }
  }
  return inputs;
}

async function embed(embedding: Embedding, message: EmbedRequestMessage): Promise<void> {
  let reply: WorkerMessage;
  try {
    const inputs = tokenize(embedding, message.texts);
    const { last_hidden_state } = (await embedding.model(inputs)) as { last_hidden_state?: Tensor };
    if (!last_hidden_state) throw new Error(`the model ${config.modelId} (${config.dtype}) has no last_hidden_state output`);
    const output = mean_pooling(last_hidden_state, inputs.attention_mask!).normalize(2, -1);
    const [count, dimensions] = output.dims;
    if (count !== message.texts.length || dimensions === undefined || !(output.data instanceof Float32Array)) {
      throw new Error(`unexpected embedding output: dims [${output.dims.join(', ')}], ${output.type}`);
    }
    reply = { type: 'result', id: message.id, data: output.data, count, dimensions };
  } catch (error) {
    reply = { type: 'embed-error', id: message.id, ...describe(error) };
  }
  await post(reply);
}

const started = performance.now();
try {
  const embedding = await load();
  // One batch at a time (the pool sends one anyway): a chain keeps the order if it ever sends more.
  let chain = Promise.resolve();
  process.on('message', (message: EmbedRequestMessage) => {
    if (message?.type === 'embed') chain = chain.then(() => embed(embedding, message));
  });
  await post({ type: 'ready', loadMs: Math.round(performance.now() - started) });
} catch (error) {
  await post({ type: 'load-error', ...describe(error) });
  process.exit(1);
}
