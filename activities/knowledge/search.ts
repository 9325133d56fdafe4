import { sql, type SelectQueryBuilder } from 'kysely';
import { cosineDistance, toSql } from 'pgvector/kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { findDocumentMarkdown, setDocumentChunkCount } from '../../db/documents.js';
import { replaceDocumentChunks, type NewChunk } from '../../db/chunks.js';
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js';
import { chunkMarkdown } from '../chunking/index.js';
import type { Embedder } from '../embedding/index.js';
import { weightsOf } from '../embedding/weights-of.js';
import { tuneVectorSearch } from '../memory/memory.js';
import { queryVectors } from '../embedding/query-vector-cache.js';

/** Knowledge bases: chunking and embedding documents, and searching their chunks. */

export const MAX_KNOWLEDGE_K = 50;
const EMBED_BATCH = 32;

export interface KnowledgeHit {
  chunk_id: string;
  content: string;
  document_id: string;
  title: string;
  kb: string;
  heading_path: string[];
  similarity: number;
  /** `vector` for a nearest neighbour; `graph` for a chunk reached through a related entity. */
  via: 'vector' | 'graph';
}

export interface KnowledgeQuery {
  query: string;
  /** Limit the search to one knowledge base. */
  kbId?: string;
  k: number;
  /** `graph` adds chunks that mention entities related to the nearest chunks' entities. */
  mode: 'vector' | 'graph';
  /** How many relation steps `graph` mode follows (1–3). */
  hops: number;
}

/**
 * Chunks the document's Markdown, embeds every chunk, and swaps in the new chunks (and the chunk count)
 * in one transaction, so a retry never leaves a half-embedded document. `beat` is called between
 * batches (activity heartbeats). A document embedded already (a text document, during its upload; a
 * retried activity whose first attempt committed) keeps its chunks: its Markdown never changes.
 */
export async function embedDocument(db: Db, embedder: Embedder, tenantId: string, documentId: string, beat: () => void = () => {}): Promise<number> {
  const doc = await withTenant(db, tenantId, (tx) => findDocumentMarkdown(tx, tenantId, documentId));
  if (!doc) throw new Error(`document ${documentId} does not exist`);
  if (doc.chunk_count > 0) return doc.chunk_count;
  const chunks = await embedMarkdown(embedder, doc.markdown ?? '', beat);
  await withTenant(db, tenantId, async (tx) => {
    await replaceDocumentChunks(tx, tenantId, doc.kb_id, documentId, chunks);
    await setDocumentChunkCount(tx, tenantId, documentId, chunks.length);
  });
  return chunks.length;
}

/** Markdown cut into chunks, each with its vector, ready to store; `beat` is called between embedder calls. */
export async function embedMarkdown(embedder: Embedder, markdown: string, beat: () => void = () => {}): Promise<NewChunk[]> {
  const chunks = chunkMarkdown(markdown);
  const vectors: string[] = [];
  for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
    const batch = await embedder.embed(chunks.slice(i, i + EMBED_BATCH).map((c) => embeddingText(c.headingPath, c.content)));
    // pgvector's text form; `toSql` takes plain arrays, not Float32Array.
    vectors.push(...batch.map((v) => toSql(Array.from(v))!));
    beat();
  }
  const embeddedBy = weightsOf(embedder);
  return chunks.map((chunk, i) => ({ index: chunk.index, content: chunk.content, headingPath: chunk.headingPath, embedded: { embedding: vectors[i]!, ...embeddedBy } }));
}

/** The heading path gives a chunk its context: "Install > Linux" says what a bare command list is about. */
export function embeddingText(headingPath: string[], content: string): string {
  return headingPath.length ? `${headingPath.join(' > ')}\n\n${content}` : content;
}

/** The chunks nearest the query by cosine similarity (plus, in graph mode, their entities' neighbours). */
export async function searchKnowledge(db: Db, embedder: Embedder, tenantId: string, q: KnowledgeQuery): Promise<KnowledgeHit[]> {
  const queryVector = await queryVectors.vector(embedder, tenantId, q.query);
  return withTenant(db, tenantId, async (tx) => {
    await tuneVectorSearch(tx);
    const hits = (await nearestChunks(tx, embedder, tenantId, queryVector, q.k, q.kbId).execute()).map((row) => hit(row, 'vector'));
    if (q.mode !== 'graph' || hits.length === 0) return hits;

    const related = await relatedChunkIds(tx, tenantId, hits.map((h) => h.chunk_id), q.hops, q.kbId);
    const extra = related.filter((id) => !hits.some((h) => h.chunk_id === id));
    if (extra.length === 0) return hits;
    const graphHits = (await chunkHits(tx, embedder, tenantId, queryVector).where('chunks.id', 'in', extra).execute()).map((row) => hit(row, 'graph'));
    return [...hits, ...graphHits].sort((a, b) => b.similarity - a.similarity).slice(0, q.k + graphHits.length);
  });
}

/** Chunks of the tenant with what a hit shows of them and their distance to the query. */
function chunkHits(tx: TenantTx, embedder: Pick<Embedder, 'modelId' | 'dtype'>, tenantId: string, queryVector: number[]) {
  return tx
    .selectFrom('chunks')
    .innerJoin('documents', 'documents.id', 'chunks.document_id')
    .innerJoin('knowledge_bases', 'knowledge_bases.id', 'chunks.kb_id')
    .select([
      'chunks.id',
      'chunks.content',
      'chunks.document_id',
      'chunks.heading_path',
      'documents.title',
      'knowledge_bases.name as kb',
      distanceTo(queryVector).as('distance'),
    ])
    .where('chunks.tenant_id', '=', tenantId)
    .$call(madeBy(embedder));
}

/**
 * The k chunks nearest the query (in one knowledge base, or all), best first. Exported for
 * bench/search.ts, which times and EXPLAINs this very query.
 *
 * The nearest chunks are found in `chunks` alone and joined afterwards. With the joins in the same query
 * the planner multiplies the document's and the knowledge base's selectivities (which are not
 * independent), expects a few dozen rows, and sorts the whole tenant exactly instead of walking the HNSW
 * index: bench/search.ts saw it at 100k chunks once the database held other tenants' documents.
 */
export function nearestChunks(tx: TenantTx, embedder: Pick<Embedder, 'modelId' | 'dtype'>, tenantId: string, queryVector: number[], k: number, kbId?: string) {
  let ids = tx
    .selectFrom('chunks')
    .select(['chunks.id', distanceTo(queryVector).as('distance')])
    .where('chunks.tenant_id', '=', tenantId)
    .$call(madeBy(embedder))
    .orderBy(distanceTo(queryVector))
    .limit(k);
  if (kbId) ids = ids.where('chunks.kb_id', '=', kbId);
  return chunkHits(tx, embedder, tenantId, queryVector).innerJoin(ids.as('nearest'), 'nearest.id', 'chunks.id').orderBy('nearest.distance');
}

/** Cosine distance (pgvector's `<=>`, which the HNSW index's `vector_cosine_ops` serves). */
function distanceTo(queryVector: number[]) {
  return cosineDistance('chunks.embedding', queryVector).$castTo<number>();
}

/**
 * Only chunks embedded by this embedder's weights: a vector made by other weights lives in another space,
 * and its distance to the query means nothing. Such chunks are found again once the `reembedVectors`
 * workflow has re-embedded them (activities/embedding/reembed.ts).
 */
function madeBy(embedder: Pick<Embedder, 'modelId' | 'dtype'>) {
  return <QB extends SelectQueryBuilder<Database, 'chunks', object>>(qb: QB): QB =>
    qb.where('chunks.embedding_model', '=', embedder.modelId).where('chunks.embedding_dtype', '=', embedder.dtype) as QB;
}

function hit(
  row: { id: string; content: string; document_id: string; heading_path: string[]; title: string; kb: string; distance: number },
  via: KnowledgeHit['via'],
): KnowledgeHit {
  return {
    chunk_id: row.id,
    content: row.content,
    document_id: row.document_id,
    title: row.title,
    kb: row.kb,
    heading_path: row.heading_path,
    similarity: 1 - Number(row.distance),
    via,
  };
}

/**
 * Chunks mentioning entities within `hops` relation steps of the entities the given chunks mention;
 * within `kbId` when the search is scoped to one knowledge base, across the workspace's otherwise.
 */
async function relatedChunkIds(tx: TenantTx, tenantId: string, chunkIds: string[], hops: number, kbId: string | undefined): Promise<string[]> {
  const entities = await tx
    .selectFrom('kb_entities')
    .select(['name', 'kb_id'])
    .where('tenant_id', '=', tenantId)
    .$if(kbId !== undefined, (qb) => qb.where('kb_id', '=', kbId!))
    .where(sql<boolean>`chunk_ids ?| ${sql.val(chunkIds)}::text[]`)
    .execute();
  let frontier = new Set(entities.map((e) => e.name.toLowerCase()));
  const seen = new Set(frontier);
  for (let step = 0; step < hops && frontier.size > 0; step++) {
    const names = [...frontier];
    const relations = await tx
      .selectFrom('kb_relations')
      .select(['source', 'target'])
      .where('tenant_id', '=', tenantId)
      .$if(kbId !== undefined, (qb) => qb.where('kb_id', '=', kbId!))
      .where((eb) => eb.or([eb(eb.fn('lower', ['source']), 'in', names), eb(eb.fn('lower', ['target']), 'in', names)]))
      .execute();
    frontier = new Set();
    for (const relation of relations) {
      for (const name of [relation.source.toLowerCase(), relation.target.toLowerCase()]) {
        if (!seen.has(name)) {
          seen.add(name);
          frontier.add(name);
        }
      }
    }
  }
  const neighbours = [...seen].filter((name) => !entities.some((e) => e.name.toLowerCase() === name));
  if (neighbours.length === 0) return [];
  const rows = await tx
    .selectFrom('kb_entities')
    .select('chunk_ids')
    .where('tenant_id', '=', tenantId)
    .$if(kbId !== undefined, (qb) => qb.where('kb_id', '=', kbId!))
    .where((eb) => eb(eb.fn('lower', ['name']), 'in', neighbours))
    .execute();
  return [...new Set(rows.flatMap((row) => row.chunk_ids))];
}
