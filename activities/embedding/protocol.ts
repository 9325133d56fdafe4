/** Messages between the pool (pool.ts) and its worker processes (embedding-worker.ts), over Node IPC. */

/** The worker's configuration, passed as its one command-line argument (JSON). */
export interface EmbeddingWorkerConfig {
  modelId: string;
  dtype: string;
  /** Transformers.js `env.localModelPath` (and `env.cacheDir` when remote downloads are allowed). */
  modelsRoot: string;
  allowRemote: boolean;
  maxTokens: number;
  /** onnxruntime intra-op threads for this worker's session. */
  intraOpThreads: number;
  /** The ONNX file's path and the sha256 it must have (the platform's own weights only). */
  expectedWeights?: { path: string; sha256: string };
}

export interface EmbedRequestMessage {
  type: 'embed';
  id: number;
  texts: string[];
}

export type WorkerMessage =
  | { type: 'ready'; loadMs: number }
  | { type: 'load-error'; message: string; stack?: string }
  /** `data` holds `count` vectors of `dimensions` floats, row after row. */
  | { type: 'result'; id: number; data: Float32Array; count: number; dimensions: number }
  | { type: 'embed-error'; id: number; message: string; stack?: string };
