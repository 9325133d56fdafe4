import { sql, type Kysely } from 'kysely';
import { enableTenantIsolation } from './0001_foundation.js';

/**
 * Long-term memory and knowledge bases: 384-dimension vectors (pgvector) with the model and dtype that
 * made each one, HNSW indexes for cosine search, uploaded documents with their conversion status, chunks,
 * and the entity-relationship graph extracted from a knowledge base's documents.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;
  const vector = sql`vector(384)`;

  await db.schema
    .createTable('memories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('embedding', vector, (c) => c.notNull())
    .addColumn('embedding_model', 'text', (c) => c.notNull())
    .addColumn('embedding_dtype', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await sql`create index memories_embedding_idx on memories using hnsw (embedding vector_cosine_ops)`.execute(db);
  await db.schema.createIndex('memories_tenant_idx').on('memories').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // Entity-relationship extraction: null when off, else {"model": ..., "script"?: [...]}.
    .addColumn('graph', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('knowledge_bases_tenant_name_key', ['tenant_id', 'name'])
    .execute();

  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kb_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text')
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('accepted', 'queued', 'converting', 'ready', 'failed')`))
    .addColumn('error', 'text')
    // The uploaded file, kept until its conversion is done.
    .addColumn('source', 'bytea')
    .addColumn('markdown', 'text')
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('documents_kb_idx').on('documents').columns(['kb_id', 'id']).execute();

  await db.schema
    .createTable('chunks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kb_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('index', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('heading_path', 'jsonb', (c) => c.notNull())
    .addColumn('embedding', vector, (c) => c.notNull())
    .addColumn('embedding_model', 'text', (c) => c.notNull())
    .addColumn('embedding_dtype', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('chunks_document_index_key', ['document_id', 'index'])
    .execute();
  await sql`create index chunks_embedding_idx on chunks using hnsw (embedding vector_cosine_ops)`.execute(db);
  await db.schema.createIndex('chunks_tenant_kb_idx').on('chunks').columns(['tenant_id', 'kb_id']).execute();

  await db.schema
    .createTable('kb_entities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kb_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text')
    // Which chunks mention the entity, so a hit can be expanded to its neighbours' chunks.
    .addColumn('chunk_ids', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('kb_entities_kb_name_idx').on('kb_entities').columns(['kb_id', 'name']).execute();

  await db.schema
    .createTable('kb_relations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('kb_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('relation', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('kb_relations_kb_idx').on('kb_relations').columns(['kb_id', 'source']).execute();

  for (const table of ['memories', 'knowledge_bases', 'documents', 'chunks', 'kb_entities', 'kb_relations']) {
    await enableTenantIsolation(db, table);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['kb_relations', 'kb_entities', 'chunks', 'documents', 'knowledge_bases', 'memories']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
