import type { EmbeddedBy } from '../../db/stored-embedding.js';
import type { ActivityDeps } from '../deps.js';
import type { ReembedCursor } from '../../workflows/reembed-vectors-api.js';
import { reembedBatch } from './reembed.js';

/** The `reembedVectors` workflow's activity: one batch of vectors made by other weights, made again. */
export function embeddingActivities({ db, embedder }: ActivityDeps) {
  return {
    reembedVectorsBatch: (input: { weights: EmbeddedBy; cursor: ReembedCursor; limit: number }) => reembedBatch(db, embedder(), input.weights, input.cursor, input.limit),
  };
}
