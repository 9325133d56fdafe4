import { toSql } from 'pgvector/kysely';
import { findChunksEmbeddedOtherwise, replaceChunkEmbedding } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import { findMemoriesEmbeddedOtherwise, replaceMemoryEmbedding } from '../../db/memories.js';
import { tableHasVectorsEmbeddedOtherwise, type EmbeddedBy, type StoredEmbedding } from '../../db/stored-embedding.js';
import { embeddingText } from '../knowledge/search.js';
import { REEMBED_TABLES, type ReembedCursor } from '../../workflows/reembed-vectors-api.js';
import type { Embedder } from './pool.js';
import { weightsOf } from './weights-of.js';

/**
 * Re-embedding: vectors made by other weights than the embedder's (the platform's earlier q4 weights, or
 * a later change of model) are another space, which searches skip; these steps embed their text again
 * with the current weights, a batch at a time, for the `reembedVectors` workflow.
 *
 * A walk goes through `memories`, then `chunks`, in id order, across every tenant (a vector depends on
 * its text only); the workflow walks again while a walk re-embedded anything. Each row is written only if it still holds what was read, so a memory
 * rewritten meanwhile keeps its newer vector, and a retried batch redoes nothing it finished.
 */

export interface ReembedBatchResult {
  /** Rows given a vector of the current weights. */
  reembedded: number;
  /** Where the next batch starts; null when both tables have been walked. */
  next: ReembedCursor | null;
}

/**
 * Re-embeds with `target` up to `limit` rows after the cursor whose vectors other weights made. Throws
 * (a retryable failure, for another worker) when this process's embedder has other weights than `target`.
 */
export async function reembedBatch(db: Db, embedder: Embedder, target: EmbeddedBy, cursor: ReembedCursor, limit: number): Promise<ReembedBatchResult> {
  const weights = weightsOf(embedder);
  if (weights.embedding_model !== target.embedding_model || weights.embedding_dtype !== target.embedding_dtype) {
    throw new Error(`this worker embeds with ${weights.embedding_model} ${weights.embedding_dtype}, not ${target.embedding_model} ${target.embedding_dtype}`);
  }
  const rows = cursor.table === 'memories' ? await memoriesToReembed(db, weights, cursor.afterId, limit) : await chunksToReembed(db, weights, cursor.afterId, limit);
  let reembedded = 0;
  if (rows.length) {
    const vectors = await embedder.embed(rows.map((row) => row.text));
    for (const [i, row] of rows.entries()) {
      if (await row.store({ embedding: toSql(Array.from(vectors[i]!))!, ...weights })) reembedded++;
    }
  }
  if (rows.length === limit) return { reembedded, next: { table: cursor.table, afterId: rows.at(-1)!.id } };
  const following = REEMBED_TABLES[REEMBED_TABLES.indexOf(cursor.table) + 1];
  return { reembedded, next: following ? { table: following, afterId: '' } : null };
}

/** A row to re-embed: its id, the text its vector is made from, and how to store the new vector. */
interface RowToReembed {
  id: string;
  text: string;
  store: (embedded: StoredEmbedding) => Promise<boolean>;
}

async function memoriesToReembed(db: Db, weights: EmbeddedBy, afterId: string, limit: number): Promise<RowToReembed[]> {
  const memories = await findMemoriesEmbeddedOtherwise(db, weights, afterId, limit);
  return memories.map((memory) => ({ id: memory.id, text: memory.content, store: (embedded) => replaceMemoryEmbedding(db, memory, embedded) }));
}

async function chunksToReembed(db: Db, weights: EmbeddedBy, afterId: string, limit: number): Promise<RowToReembed[]> {
  const chunks = await findChunksEmbeddedOtherwise(db, weights, afterId, limit);
  return chunks.map((chunk) => ({ id: chunk.id, text: embeddingText(chunk.heading_path, chunk.content), store: (embedded) => replaceChunkEmbedding(db, chunk, embedded) }));
}

/** Whether any stored vector was made by other weights than the embedder's (the workers' start-up check). */
export async function hasVectorsEmbeddedOtherwise(db: Db, embedder: Embedder): Promise<boolean> {
  const weights = weightsOf(embedder);
  for (const table of REEMBED_TABLES) if (await tableHasVectorsEmbeddedOtherwise(db, table, weights)) return true;
  return false;
}
