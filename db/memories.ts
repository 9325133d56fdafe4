import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { EmbeddedBy, StoredEmbedding } from './stored-embedding.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `memories` table: what the workspace remembers, each with its embedding. The nearest-neighbour
 * search lives with the memory domain code (activities/memory/memory.ts), beside the search tuning it needs.
 */

export interface Memory {
  id: string;
  content: string;
  created_at: Date;
  updated_at: Date;
}

const MEMORY_COLUMNS = ['id', 'content', 'created_at', 'updated_at'] as const;

const memoriesPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('memories').select(MEMORY_COLUMNS).where('tenant_id', '=', tenantId));

export async function listMemoriesPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<Memory>> {
  return memoriesPage(reader, { tenantId }, pageQuery);
}

export async function insertMemory(tx: TenantTx, tenantId: string, content: string, embedded: StoredEmbedding): Promise<Memory> {
  return tx
    .insertInto('memories')
    .values({ id: newId('mem'), tenant_id: tenantId, content, ...embedded })
    .returning(MEMORY_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function memoryExists(tx: TenantTx, tenantId: string, memoryId: string): Promise<boolean> {
  const row = await tx.selectFrom('memories').select('id').where('id', '=', memoryId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row !== undefined;
}

/** Replaces the content and its embedding; undefined when there is no such memory. */
export async function updateMemoryById(tx: TenantTx, tenantId: string, memoryId: string, content: string, embedded: StoredEmbedding): Promise<Memory | undefined> {
  return tx
    .updateTable('memories')
    .set({ content, ...embedded, updated_at: new Date() })
    .where('id', '=', memoryId)
    .where('tenant_id', '=', tenantId)
    .returning(MEMORY_COLUMNS)
    .executeTakeFirst();
}

/** Whether there was such a memory to delete. */
export async function deleteMemoryById(tx: TenantTx, tenantId: string, memoryId: string): Promise<boolean> {
  const deleted = await tx.deleteFrom('memories').where('id', '=', memoryId).where('tenant_id', '=', tenantId).returning('id').executeTakeFirst();
  return deleted !== undefined;
}

/** A memory whose vector other weights made, as read for re-embedding. */
export interface MemoryToReembed extends EmbeddedBy {
  id: string;
  content: string;
}

/**
 * Every tenant's memories (the owner role, past row-level security) with ids after `afterId` whose
 * vectors `weights` did not make, in id order: the re-embedding walks the table once by id.
 */
export async function findMemoriesEmbeddedOtherwise(db: Db, weights: EmbeddedBy, afterId: string, limit: number): Promise<MemoryToReembed[]> {
  return db
    .selectFrom('memories')
    .select(['id', 'content', 'embedding_model', 'embedding_dtype'])
    .where('id', '>', afterId)
    .where((eb) => eb.or([eb('embedding_model', '<>', weights.embedding_model), eb('embedding_dtype', '<>', weights.embedding_dtype)]))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Stores the memory's new vector, unless the memory changed since it was read (rewritten, deleted or
 * re-embedded already): then the newer write stands. Whether it was stored.
 */
export async function replaceMemoryEmbedding(db: Db, read: MemoryToReembed, embedded: StoredEmbedding): Promise<boolean> {
  const updated = await db
    .updateTable('memories')
    .set(embedded)
    .where('id', '=', read.id)
    .where('content', '=', read.content)
    .where('embedding_model', '=', read.embedding_model)
    .where('embedding_dtype', '=', read.embedding_dtype)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}
