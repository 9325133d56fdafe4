import { sql } from 'kysely';
import { cosineDistance, toSql } from 'pgvector/kysely';
import type { Db } from '../../db/database.js';
import { insertMemory, memoryExists, updateMemoryById } from '../../db/memories.js';
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js';
import type { Embedder } from '../embedding/index.js';
import { weightsOf } from '../embedding/weights-of.js';
import { queryVectors } from '../embedding/query-vector-cache.js';

/** Long-term memory, shared by the API and the `memory_*` built-in tools. */

export const MAX_SEARCH_K = 50;

export interface MemoryHit {
  id: string;
  content: string;
  similarity: number;
}

/** Embeds first, then writes: an embedder failure leaves nothing behind. */
export async function writeMemory(db: Db, embedder: Embedder, tenantId: string, content: string) {
  const embedding = await embedForStorage(embedder, content);
  return withTenant(db, tenantId, (tx) => insertMemory(tx, tenantId, content, { embedding, ...weightsOf(embedder) }));
}

/**
 * Re-embeds and replaces the content; undefined when there is no such memory. The memory is looked up
 * before anything is embedded: an unknown id costs no embedding, and is a 404 even when the embedder is down.
 */
export async function rewriteMemory(db: Db, embedder: Embedder, tenantId: string, id: string, content: string) {
  if (!(await withTenant(db, tenantId, (tx) => memoryExists(tx, tenantId, id)))) return undefined;
  const embedding = await embedForStorage(embedder, content);
  return withTenant(db, tenantId, (tx) =>
    updateMemoryById(tx, tenantId, id, content, { embedding, ...weightsOf(embedder) }),
  );
}

/** The content's embedding in pgvector's text form (`toSql` takes plain arrays, not Float32Array). */
async function embedForStorage(embedder: Embedder, content: string): Promise<string> {
  // One text with an agent or a client waiting on it: ahead of queued ingestion.
  const [vector] = await embedder.embed([content], { priority: 'interactive' });
  return toSql(Array.from(vector!))!;
}

/** The k memories nearest to the query by cosine similarity, best first. */
export async function searchMemory(db: Db, embedder: Embedder, tenantId: string, query: string, k: number): Promise<MemoryHit[]> {
  // A repeated query skips the embedder (activities/embedding/query-vector-cache.ts).
  const queryVector = await queryVectors.vector(embedder, tenantId, query);
  return withTenant(db, tenantId, async (tx) => {
    await tuneVectorSearch(tx);
    const distance = cosineDistance('embedding', queryVector).$castTo<number>();
    const rows = await tx
      .selectFrom('memories')
      .select(['id', 'content', distance.as('distance')])
      .where('tenant_id', '=', tenantId)
      // Only memories embedded by these weights: another model's vectors do not compare (they are
      // re-embedded by the `reembedVectors` workflow, activities/embedding/reembed.ts).
      .where('embedding_model', '=', embedder.modelId)
      .where('embedding_dtype', '=', embedder.dtype)
      .orderBy(distance)
      .limit(k)
      .execute();
    return rows.map((row) => ({ id: row.id, content: row.content, similarity: 1 - Number(row.distance) }));
  });
}

/**
 * HNSW settings for this transaction: a wider candidate list than the default 40 (recall 0.97 rather
 * than 0.86 at 100k vectors, DESIGN.md), and iterative scans so the tenant filter, applied after the
 * index, still yields k rows. The searches order by `cosineDistance` (pgvector's `<=>`), the operator
 * the indexes' `vector_cosine_ops` serve.
 */
export async function tuneVectorSearch(tx: TenantTx): Promise<void> {
  // One statement, one round trip, for both.
  await sql`select set_config('hnsw.ef_search', '100', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`.execute(tx);
}
