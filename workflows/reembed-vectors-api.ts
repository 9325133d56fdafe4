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
  /**
   * The weights to re-embed with: only a worker whose embedder has them takes a batch (in a fleet that
   * is being upgraded, the others' attempts fail and are retried elsewhere).
   */
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
}
