import type { Db } from './database.js';
import { newId } from './ids.js';
import { insertBatches } from './insert-batches.js';
import type { EmbeddedBy, StoredEmbedding } from './stored-embedding.js';
import type { TenantTx } from './tenant-transaction.js';

/**
 * The `chunks` table: a document's Markdown cut into embedded pieces. The nearest-neighbour search
 * lives with the knowledge domain code (activities/knowledge/search.ts), beside the query plan it needs.
 */

export interface NewChunk {
  index: number;
  content: string;
  headingPath: string[];
  embedded: StoredEmbedding;
}

/** Replaces every chunk of the document with these (none: the document has no text). */
export async function replaceDocumentChunks(tx: TenantTx, tenantId: string, kbId: string, documentId: string, chunks: NewChunk[]): Promise<void> {
  await tx.deleteFrom('chunks').where('document_id', '=', documentId).where('tenant_id', '=', tenantId).execute();
  await insertDocumentChunks(tx, tenantId, kbId, documentId, chunks);
}

/** Adds the chunks of a document that has none yet (a statement per few thousand chunks). */
export async function insertDocumentChunks(tx: TenantTx, tenantId: string, kbId: string, documentId: string, chunks: NewChunk[]): Promise<void> {
  const rows = chunks.map((chunk) => ({
    id: newId('chk'),
    tenant_id: tenantId,
    kb_id: kbId,
    document_id: documentId,
    index: chunk.index,
    content: chunk.content,
    heading_path: JSON.stringify(chunk.headingPath),
    ...chunk.embedded,
  }));
  for (const batch of insertBatches(rows)) await tx.insertInto('chunks').values(batch).execute();
}

/** A chunk whose vector other weights made, as read for re-embedding. */
export interface ChunkToReembed extends EmbeddedBy {
  id: string;
  content: string;
  heading_path: string[];
}

/**
 * Every tenant's chunks (the owner role, past row-level security) with ids after `afterId` whose
 * vectors `weights` did not make, in id order: the re-embedding walks the table once by id.
 */
export async function findChunksEmbeddedOtherwise(db: Db, weights: EmbeddedBy, afterId: string, limit: number): Promise<ChunkToReembed[]> {
  return db
    .selectFrom('chunks')
    .select(['id', 'content', 'heading_path', 'embedding_model', 'embedding_dtype'])
    .where('id', '>', afterId)
    .where((eb) => eb.or([eb('embedding_model', '<>', weights.embedding_model), eb('embedding_dtype', '<>', weights.embedding_dtype)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Stores the chunk's new vector, unless it was re-embedded or deleted since it was read (a chunk's text
 * never changes; its document's re-embedding replaces the rows). Whether it was stored.
 */
export async function replaceChunkEmbedding(db: Db, read: ChunkToReembed, embedded: StoredEmbedding): Promise<boolean> {
  const updated = await db
    .updateTable('chunks')
    .set(embedded)
    .where('id', '=', read.id)
    .where('embedding_model', '=', read.embedding_model)
    .where('embedding_dtype', '=', read.embedding_dtype)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}
