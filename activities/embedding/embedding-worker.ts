/**
 * One embedding worker process (forked by pool.ts with an IPC channel, never imported): loads the
 * Transformers.js feature-extraction pipeline once, sends `ready` (or `load-error` and exits), then
 * answers `embed` messages one at a time with mean-pooled, L2-normalized vectors. It exits when the
 * channel to its parent closes, so it never outlives the process that started it, and ignores
 * SIGINT and SIGTERM (the pool stops it with SIGKILL).
 */
import { env, pipeline, type DataType, type FeatureExtractionPipeline } from '@huggingface/transformers';
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

async function load(): Promise<FeatureExtractionPipeline> {
  const extractor = await pipeline('feature-extraction', config.modelId, {
    dtype: config.dtype as DataType,
    // Without onnxruntime's CPU arena a worker stays ~90 MB smaller after long batches (measured:
    // ~330 MB instead of ~430 MB after 16 × 256-token batches) at no measurable cost in speed.
    session_options: { intraOpNumThreads: config.intraOpThreads, interOpNumThreads: 1, enableCpuMemArena: false },
  });
  const tokenizer = extractor.tokenizer as { model_max_length?: number };
  tokenizer.model_max_length = Math.min(config.maxTokens, tokenizer.model_max_length ?? Infinity);
  return extractor;
}

async function embed(extractor: FeatureExtractionPipeline, message: EmbedRequestMessage): Promise<void> {
  let reply: WorkerMessage;
  try {
    const output = await extractor(message.texts, { pooling: 'mean', normalize: true });
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
  const extractor = await load();
  // One batch at a time (the pool sends one anyway): a chain keeps the order if it ever sends more.
  let chain = Promise.resolve();
  process.on('message', (message: EmbedRequestMessage) => {
    if (message?.type === 'embed') chain = chain.then(() => embed(extractor, message));
  });
  await post({ type: 'ready', loadMs: Math.round(performance.now() - started) });
} catch (error) {
  await post({ type: 'load-error', ...describe(error) });
  process.exit(1);
}
