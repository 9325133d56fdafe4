import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createChildTable, createNamedTenantTable, createTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Long-term memory and knowledge bases: 384-dimension vectors (pgvector) with the model and dtype that
 * made each one, HNSW indexes for cosine search, uploaded documents with their conversion status, chunks,
 * and the entity-relationship graph extracted from a knowledge base's documents.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTenantTable(db, 'memories')
    .addColumn('content', 'text', notNull)
    .$call(embedding)
    .$call(timestamps)
    .execute();
  await sql`create index memories_embedding_idx on memories using hnsw (embedding vector_cosine_ops)`.execute(db);
  await db.schema.createIndex('memories_tenant_idx').on('memories').columns(['tenant_id', 'id']).execute();

  await createNamedTenantTable(db, 'knowledge_bases')
    .addColumn('description', 'text')
    // Entity-relationship extraction: null when off, else {"model": ..., "script"?: [...]}.
    .addColumn('graph', 'jsonb')
    .$call(timestamps)
    .execute();

  await createChildTable(db, 'documents', 'kb_id', 'knowledge_bases')
    .addColumn('title', 'text', notNull)
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text')
    .addColumn('format', 'text', notNull)
    .addColumn('size_bytes', 'integer', notNull)
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('accepted', 'queued', 'converting', 'ready', 'failed')`))
    .addColumn('error', 'text')
    // The uploaded file, kept until its conversion is done.
    .addColumn('source', 'bytea')
    .addColumn('markdown', 'text')
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('documents_kb_idx').on('documents').columns(['kb_id', 'id']).execute();

  await createDocumentPartTable(db, 'chunks')
    .addColumn('index', 'integer', notNull)
    .addColumn('content', 'text', notNull)
    .addColumn('heading_path', 'jsonb', notNull)
    .$call(embedding)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addUniqueConstraint('chunks_document_index_key', ['document_id', 'index'])
    .execute();
  await sql`create index chunks_embedding_idx on chunks using hnsw (embedding vector_cosine_ops)`.execute(db);
  await db.schema.createIndex('chunks_tenant_kb_idx').on('chunks').columns(['tenant_id', 'kb_id']).execute();

  await createDocumentPartTable(db, 'kb_entities')
    .addColumn('name', 'text', notNull)
    .addColumn('type', 'text')
    // Which chunks mention the entity, so a hit can be expanded to its neighbours' chunks.
    .addColumn('chunk_ids', 'jsonb', notNull)
    .execute();
  await db.schema.createIndex('kb_entities_kb_name_idx').on('kb_entities').columns(['kb_id', 'name']).execute();

  await createDocumentPartTable(db, 'kb_relations')
    .addColumn('source', 'text', notNull)
    .addColumn('relation', 'text', notNull)
    .addColumn('target', 'text', notNull)
    .execute();
  await db.schema.createIndex('kb_relations_kb_idx').on('kb_relations').columns(['kb_id', 'source']).execute();

  await enableTenantIsolation(db, 'memories', 'knowledge_bases', 'documents', 'chunks', 'kb_entities', 'kb_relations');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'kb_relations', 'kb_entities', 'chunks', 'documents', 'knowledge_bases', 'memories');
}

/** What ingestion derives from one document of a knowledge base: deleted with the document or the knowledge base. */
function createDocumentPartTable(db: Kysely<unknown>, name: string) {
  return createChildTable(db, name, 'kb_id', 'knowledge_bases').addColumn('document_id', 'text', ownedBy('documents'));
}

/** A 384-dimension embedding with the model and dtype that made it, so a change of model is detectable. */
function embedding<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table
    .addColumn('embedding', sql`vector(384)`, notNull)
    .addColumn('embedding_model', 'text', notNull)
    .addColumn('embedding_dtype', 'text', notNull);
}
