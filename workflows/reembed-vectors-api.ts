import type { EmbeddedBy } from '../db/stored-embedding.js';
import { TASK_QUEUES } from './task-queues.js';

/**
 * The re-embedding workflow's contract: started by a worker process that finds vectors made by other
 * weights than its embedder's (workers/reembedding.ts), on the `ingest` queue beside the other embedding
 * work. One per target weights: its id names them, and a second start while it runs joins the first.
 */
export const REEMBED_VECTORS_WORKFLOW_TYPE = 'reembedVectors';
export const REEMBED_VECTORS_TASK_QUEUE = TASK_QUEUES.ingest;

export function reembedVectorsWorkflowId(weights: EmbeddedBy): string {
  return `reembed-vectors-${weights.embedding_model}-${weights.embedding_dtype}`;
}

/**
 * The task queue of the batches that re-embed with `weights`: only worker processes whose embedder has
 * those weights poll it (workers/workers.ts), so a batch waits there for one instead of failing on every
 * other worker in turn and being retried for ever when none is left (a rollback in the middle of a
 * re-embedding).
 */
export function reembedBatchTaskQueue(weights: EmbeddedBy): string {
  return `reembed-batches-${weights.embedding_model}-${weights.embedding_dtype}`;
}

/**
 * How the workflow runs, carried in its input rather than by `patched()` (as the agent run does):
 * absent, as in workflows started before it existed, the batches go to the `ingest` queue, where a worker
 * with other weights fails them and they are retried for ever; 1, they go to the target weights' own
 * queue and wait there at most `waitForWorkerMs`.
 */
export const REEMBED_VECTORS_VERSION = 1;

/** How long a batch waits for a worker with the target weights before the workflow gives up: an hour. */
export const REEMBED_WAIT_FOR_WORKER_MS = 60 * 60_000;

/** A new workflow's input: the current version, from the start of the first table. */
export function reembedVectorsInput(weights: EmbeddedBy): ReembedVectorsInput {
  return { weights, version: REEMBED_VECTORS_VERSION };
}

/** The tables holding vectors, in the order the walk takes them. */
export const REEMBED_TABLES = ['memories', 'chunks'] as const;
export type ReembedTable = (typeof REEMBED_TABLES)[number];

/** Where the walk stands: rows of `table` with ids after `afterId` are still to be looked at. */
export interface ReembedCursor {
  table: ReembedTable;
  afterId: string;
}

export const REEMBED_START: ReembedCursor = { table: REEMBED_TABLES[0], afterId: '' };

export interface ReembedVectorsInput {
  /** The weights to re-embed with: only a worker whose embedder has them takes a batch. */
  weights: EmbeddedBy;
  /** Where to go on from (a continued run); from the start of the first table when absent. */
  cursor?: ReembedCursor;
  /** Rows re-embedded by the runs before this one, and by the current pass (carried across continue-as-new). */
  reembeddedBefore?: number;
  reembeddedThisPass?: number;
  /** Rows per activity (default 32: a few seconds of embedding). */
  batchSize?: number;
  /** Batches per workflow run before it continues as new, keeping its history short (default 200). */
  batchesPerRun?: number;
  /** REEMBED_VECTORS_VERSION when started by code that has it. */
  version?: typeof REEMBED_VECTORS_VERSION;
  /**
   * With a version: how long a batch may wait for a worker with the target weights (default
   * REEMBED_WAIT_FOR_WORKER_MS). When none took it by then, the workflow ends, answering what it did so
   * far; a worker with those weights that starts later starts it again (workers/reembedding.ts).
   */
  waitForWorkerMs?: number;
}
