import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  allowRemoteFromEnv,
  EMBEDDING_BATCH_SIZE,
  EMBEDDING_DIMENSIONS,
  EMBEDDING_DTYPE,
  EMBEDDING_MAX_TOKENS,
  EMBEDDING_MODEL_ID,
  EMBEDDING_WEIGHTS_SHA256,
  embeddingModelsRoot,
  embeddingThreadsFromEnv,
  missingModelFiles,
  onnxFileFor,
} from './config.js';
import { EmbedderUnavailableError } from './errors.js';
import type { EmbeddingWorkerConfig, EmbedRequestMessage, WorkerMessage } from './protocol.js';

/** Turns texts into vectors of one model; see activities/embedding/index.ts. */
export interface Embedder {
  /** Stored with every vector, with `dtype`: vectors of different (modelId, dtype) do not compare. */
  readonly modelId: string;
  readonly dtype: string;
  readonly dimensions: 384;
  /**
   * One unit-length vector per text, in order. Rejects with `EmbedderUnavailableError` when it cannot.
   * `interactive`: someone is waiting on these few texts (a search's query), so they go before texts
   * queued for ingestion.
   */
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[] | number[][]>;
  /** Stops the workers; pending and later `embed` calls reject. Idempotent. */
  close(): Promise<void>;
}

export interface EmbedOptions {
  /** Default `background`: first come, first served. */
  priority?: 'interactive' | 'background';
}

export interface EmbedderOptions {
  /** The models root (Transformers.js `localModelPath`); default `embeddingModelsRoot()`. */
  modelsRoot?: string;
  /** Workers (processes), each with its own copy of the model (~225–245 MB resident with single texts); default `EMBEDDING_THREADS` (two, or one on a one-core machine). */
  threads?: number;
  /** Texts per model call; default `EMBEDDING_BATCH_SIZE` (1). */
  batchSize?: number;
  /** onnxruntime threads per worker; default the available cores divided among the workers. */
  intraOpThreads?: number;
  /** Let Transformers.js download missing files (not the platform's own graph: see config.ts); default `EMBEDDING_ALLOW_REMOTE=true`. */
  allowRemote?: boolean;
  /** Which of the model's ONNX weight files (`onnx/model_<dtype>.onnx`); default `EMBEDDING_DTYPE` (benchmarks compare others). */
  dtype?: string;
}

export interface EmbedderStats {
  threads: number;
  /** Workers that have loaded the model. */
  ready: number;
  /** Workers still loading it. */
  loading: number;
  /** Texts waiting for a worker (both lanes). */
  queued: number;
  /** Texts a worker is embedding now. */
  inFlight: number;
  /** Workers that died and were replaced (or left to the next request) since creation. */
  crashes: number;
  /** The last model load time in milliseconds, when one finished. */
  lastLoadMs: number | undefined;
  /** Process ids of the running workers. */
  pids: number[];
}

interface EmbedRequest {
  results: Float32Array[];
  remaining: number;
  settled: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

type Lane = NonNullable<EmbedOptions['priority']>;
const LANES: readonly Lane[] = ['interactive', 'background'];
/**
 * Interactive batches in a row while background texts wait: a query then waits for one background
 * batch more now and then, and ingestion keeps a fifth of the workers however many searches come.
 */
const INTERACTIVE_BATCHES_IN_A_ROW = 4;

/** One text of a request, waiting in the queue or part of a batch. */
interface Item {
  request: EmbedRequest;
  index: number;
  text: string;
}

interface Batch {
  id: number;
  items: Item[];
}

interface PoolWorker {
  child: ChildProcess;
  state: 'loading' | 'idle' | 'busy' | 'stopped';
  batch: Batch | undefined;
  /** Why the process could not be started or talked to, if that happened. */
  error: Error | undefined;
  exited: Promise<void>;
}

/** Resolves from dist/ as from the sources' layout: the compiled worker sits beside this module. */
const WORKER_PATH = fileURLToPath(new URL('./embedding-worker.js', import.meta.url));

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * The embedder: a pool of worker processes, each running the Transformers.js tokenizer and model, so
 * tokenizing and inference never block this process's event loop.
 *
 * Why processes and not `node:worker_threads`: onnxruntime-node 1.21 (what @huggingface/transformers
 * 3.8 installs) keeps process-global N-API references, so a second thread that runs a session aborts
 * the whole process ("HandleScope::HandleScope Entering the V8 API without proper locking in place",
 * microsoft/onnxruntime#24486, huggingface/transformers.js#1292), and once the first thread has exited
 * no later thread can even load the addon ("Module did not self-register", transformers.js#651). With
 * threads there could be only one embedding thread per process, for the process's lifetime, and a
 * native crash in it would take the API or the Temporal worker down with it. A process per worker
 * costs ~40 MB and ~0.1 s more at start, keeps crashes contained, and can always be replaced.
 *
 * Texts from every `embed` call go through a FIFO queue and are cut into batches of `batchSize`
 * (texts of different calls share a batch); an idle worker takes the next batch. Interactive calls have
 * a queue of their own that is served first, and their batches hold only their texts: a search's
 * query waits for at most the batch a worker is on, not behind a document's thousand chunks, and is
 * not padded to a chunk's length. So that a steady stream of them cannot hold ingestion back for good,
 * a batch goes to the background after `INTERACTIVE_BATCHES_IN_A_ROW` interactive ones when it has
 * texts waiting.
 *
 * Workers start on the first request (or `warmup()`), load the model once, and are unref'd while idle
 * so an idle embedder never keeps a process alive; they exit when this process does. A worker that
 * dies rejects the requests whose texts it held with `EmbedderUnavailableError` (`worker_crashed`) and
 * is replaced at once; one that fails to load the model fails the queue (`load_failed`) and the next
 * request tries again.
 */
export class WorkerEmbedder implements Embedder {
  readonly modelId = EMBEDDING_MODEL_ID;
  readonly dtype: string;
  readonly dimensions = EMBEDDING_DIMENSIONS;
  readonly modelsRoot: string;
  readonly threads: number;
  readonly batchSize: number;
  readonly allowRemote: boolean;
  private readonly intraOpThreads: number;

  private readonly lanes: Record<Lane, Item[]> = { interactive: [], background: [] };
  /** Interactive batches handed out in a row while background texts waited. */
  private interactiveBatchesInARow = 0;
  private workers: PoolWorker[] = [];
  private nextBatchId = 1;
  private closed = false;
  private crashes = 0;
  private lastLoadMs: number | undefined;

  constructor(options: EmbedderOptions = {}) {
    this.modelsRoot = options.modelsRoot ?? embeddingModelsRoot();
    this.dtype = options.dtype ?? EMBEDDING_DTYPE;
    this.threads = positiveInteger('threads', options.threads ?? embeddingThreadsFromEnv());
    this.batchSize = positiveInteger('batchSize', options.batchSize ?? EMBEDDING_BATCH_SIZE);
    this.allowRemote = options.allowRemote ?? allowRemoteFromEnv();
    this.intraOpThreads = positiveInteger(
      'intraOpThreads',
      options.intraOpThreads ?? Math.max(1, Math.floor(os.availableParallelism() / this.threads)),
    );
  }

  embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts)) return Promise.reject(new TypeError('embed() takes an array of strings'));
    const notText = texts.findIndex((text) => typeof text !== 'string');
    if (notText >= 0) return Promise.reject(new TypeError(`embed(): texts[${notText}] is not a string`));
    if (this.closed) return Promise.reject(this.closedError());
    if (texts.length === 0) return Promise.resolve([]);
    const lane = this.lanes[options.priority === 'interactive' ? 'interactive' : 'background'];

    return new Promise<Float32Array[]>((resolve, reject) => {
      const request: EmbedRequest = { results: new Array(texts.length), remaining: texts.length, settled: false, resolve, reject };
      texts.forEach((text, index) => lane.push({ request, index, text }));
      this.startWorkers();
      this.dispatch();
    });
  }

  /** Starts the workers and waits until the model is loaded (a tiny embedding goes through). */
  async warmup(): Promise<void> {
    await this.embed(['warmup']);
  }

  stats(): EmbedderStats {
    const count = (state: PoolWorker['state']) => this.workers.filter((w) => w.state === state).length;
    return {
      threads: this.threads,
      ready: count('idle') + count('busy'),
      loading: count('loading'),
      queued: this.queuedTexts(),
      inFlight: this.workers.reduce((sum, w) => sum + (w.batch?.items.length ?? 0), 0),
      crashes: this.crashes,
      lastLoadMs: this.lastLoadMs,
      pids: this.workers.flatMap((w) => (w.child.pid === undefined ? [] : [w.child.pid])),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = this.closedError();
    this.failQueue(error);
    const workers = this.workers;
    this.workers = [];
    await Promise.all(
      workers.map(async (entry) => {
        if (entry.batch) this.failBatch(entry.batch, error);
        entry.batch = undefined;
        entry.state = 'stopped';
        this.setRef(entry, true); // keep this process up until the worker is gone
        entry.child.kill('SIGKILL');
        await entry.exited;
      }),
    );
  }

  private closedError(): EmbedderUnavailableError {
    return new EmbedderUnavailableError('closed', 'the embedder was closed');
  }

  /** Brings the pool up to `threads` workers while there is work, unless the model is missing. */
  private startWorkers(): void {
    if (this.closed || this.queuedTexts() === 0 || this.workers.length >= this.threads) return;
    if (!this.allowRemote) {
      const missing = missingModelFiles(this.modelsRoot, this.modelId, this.dtype);
      if (missing.length) {
        if (this.workers.length === 0) {
          this.failQueue(
            new EmbedderUnavailableError(
              'model_missing',
              `the embedding model ${this.modelId} (${this.dtype}) is not installed in ${this.modelsRoot} ` +
                `(missing ${missing.join(', ')}): run \`npm run fetch-model\` (or set EMBEDDING_MODEL_DIR ` +
                'to the models folder it filled)',
            ),
          );
        }
        return;
      }
    }
    while (this.workers.length < this.threads) this.spawn();
  }

  private spawn(): void {
    const config: EmbeddingWorkerConfig = {
      modelId: this.modelId,
      dtype: this.dtype,
      modelsRoot: this.modelsRoot,
      allowRemote: this.allowRemote,
      maxTokens: EMBEDDING_MAX_TOKENS,
      intraOpThreads: this.intraOpThreads,
      ...(this.dtype === EMBEDDING_DTYPE && this.modelId === EMBEDDING_MODEL_ID
        ? { expectedWeights: { path: path.join(this.modelsRoot, this.modelId, onnxFileFor(this.dtype)), sha256: EMBEDDING_WEIGHTS_SHA256 } }
        : {}),
    };
    // No inherited execArgv (a parent's --inspect would collide); output goes to this process's.
    const child = fork(WORKER_PATH, [JSON.stringify(config)], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let markExited!: () => void;
    const entry: PoolWorker = {
      child,
      state: 'loading',
      batch: undefined,
      error: undefined,
      exited: new Promise((resolve) => (markExited = resolve)),
    };
    this.workers.push(entry);
    child.on('message', (message: WorkerMessage) => this.onMessage(entry, message));
    child.on('error', (error) => {
      entry.error = error;
      if (child.pid === undefined) {
        // It never started, so no `exit` event will come.
        markExited();
        this.onExit(entry, null, null);
      } else if (child.exitCode === null && child.signalCode === null) {
        // An IPC send failed: end it; its `exit` event reports the failure.
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) => {
      markExited();
      this.onExit(entry, code, signal);
    });
  }

  private onMessage(entry: PoolWorker, message: WorkerMessage): void {
    if (entry.state === 'stopped') return;
    switch (message.type) {
      case 'ready':
        this.lastLoadMs = message.loadMs;
        this.becomeIdle(entry);
        this.dispatch();
        return;
      case 'load-error': {
        // The worker exits by itself; without a working worker the queued texts cannot be served.
        this.remove(entry);
        const error = new EmbedderUnavailableError(
          'load_failed',
          `the embedding model ${this.modelId} (${this.dtype}) could not be loaded from ${this.modelsRoot}: ` +
            `${message.message} (run \`npm run fetch-model\` to reinstall it)`,
          { cause: Object.assign(new Error(message.message), { stack: message.stack }) },
        );
        if (!this.workers.some((w) => w.state !== 'stopped')) this.failQueue(error);
        return;
      }
      case 'result': {
        const batch = this.takeBatch(entry, message.id);
        if (!batch) return;
        const { data, count, dimensions } = message;
        if (count !== batch.items.length || dimensions !== this.dimensions || data.length !== count * dimensions) {
          this.failBatch(batch, new Error(`the embedding worker answered ${count}×${dimensions} for ${batch.items.length} texts`));
        } else {
          batch.items.forEach((item, row) => this.deliver(item, data.slice(row * dimensions, (row + 1) * dimensions)));
        }
        this.becomeIdle(entry);
        this.dispatch();
        return;
      }
      case 'embed-error': {
        const batch = this.takeBatch(entry, message.id);
        if (batch) {
          const error = new Error(`embedding failed: ${message.message}`);
          if (message.stack) error.stack = message.stack;
          this.failBatch(batch, error);
        }
        this.becomeIdle(entry);
        this.dispatch();
        return;
      }
    }
  }

  private onExit(entry: PoolWorker, code: number | null, signal: NodeJS.Signals | null): void {
    if (entry.state === 'stopped') return; // closed, or it already reported a load error
    const wasLoading = entry.state === 'loading';
    const batch = entry.batch;
    this.remove(entry);
    this.crashes++;
    const status = signal ? `was killed by ${signal}` : code === null ? 'could not be started' : `exited with code ${code}`;
    const how = `${status}${entry.error ? ` (${entry.error.message})` : ''}`;
    const error = new EmbedderUnavailableError(
      wasLoading ? 'load_failed' : 'worker_crashed',
      wasLoading
        ? `the embedding worker ${how} while loading ${this.modelId} (${this.dtype})`
        : `the embedding worker ${how} while embedding; it is being replaced`,
      { cause: entry.error },
    );
    if (batch) this.failBatch(batch, error);
    if (wasLoading) {
      // Do not respawn in a loop: the queue fails now and the next request tries again.
      if (!this.workers.some((w) => w.state !== 'stopped')) this.failQueue(error);
      return;
    }
    // Replace it now so the pool stays at its size (loading takes well under a second).
    if (!this.closed) this.spawn();
    this.dispatch();
  }

  /** Hands batches to idle workers while there are texts queued, interactive ones first. */
  private dispatch(): void {
    for (const entry of this.workers) {
      if (this.queuedTexts() === 0) return;
      if (entry.state !== 'idle') continue;
      const items = this.nextLane().splice(0, this.batchSize);
      const batch: Batch = { id: this.nextBatchId++, items };
      entry.batch = batch;
      entry.state = 'busy';
      this.setRef(entry, true);
      const message: EmbedRequestMessage = { type: 'embed', id: batch.id, texts: items.map((item) => item.text) };
      entry.child.send(message);
    }
  }

  private takeBatch(entry: PoolWorker, id: number): Batch | undefined {
    const batch = entry.batch;
    if (!batch || batch.id !== id) return undefined;
    entry.batch = undefined;
    return batch;
  }

  private becomeIdle(entry: PoolWorker): void {
    entry.state = 'idle';
    this.setRef(entry, false);
  }

  /** A busy or loading worker keeps this process alive (its answer is awaited); an idle one does not. */
  private setRef(entry: PoolWorker, ref: boolean): void {
    const { child } = entry;
    if (ref) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }

  private remove(entry: PoolWorker): void {
    entry.state = 'stopped';
    entry.batch = undefined;
    this.workers = this.workers.filter((w) => w !== entry);
  }

  private deliver(item: Item, vector: Float32Array): void {
    const { request } = item;
    if (request.settled) return;
    request.results[item.index] = vector;
    if (--request.remaining === 0) {
      request.settled = true;
      request.resolve(request.results);
    }
  }

  private failBatch(batch: Batch, error: Error): void {
    for (const item of batch.items) this.failRequest(item.request, error);
  }

  /** The lane the next batch comes from: interactive first, but not more than its share in a row while background texts wait. */
  private nextLane(): Item[] {
    const { interactive, background } = this.lanes;
    const backgroundsTurn = interactive.length === 0 || (background.length > 0 && this.interactiveBatchesInARow >= INTERACTIVE_BATCHES_IN_A_ROW);
    this.interactiveBatchesInARow = backgroundsTurn || background.length === 0 ? 0 : this.interactiveBatchesInARow + 1;
    return backgroundsTurn ? background : interactive;
  }

  private queuedTexts(): number {
    return this.lanes.interactive.length + this.lanes.background.length;
  }

  private failQueue(error: Error): void {
    const queued = [...this.lanes.interactive, ...this.lanes.background];
    this.lanes.interactive = [];
    this.lanes.background = [];
    for (const item of queued) this.failRequest(item.request, error);
  }

  /** Rejects a request once and drops its texts that are still queued. */
  private failRequest(request: EmbedRequest, error: Error): void {
    if (request.settled) return;
    request.settled = true;
    for (const lane of LANES) this.lanes[lane] = this.lanes[lane].filter((item) => item.request !== request);
    request.reject(error);
  }
}
