import { newId } from './ids.js';
import { fetchPage, type Page, type PageQuery } from './page.js';
import type { TenantTx } from './tenant-transaction.js';

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

/** How a memory's content was embedded: pgvector's text form, and the model and dtype that made it. */
export interface StoredEmbedding {
  embedding: string;
  embedding_model: string;
  embedding_dtype: string;
}

const MEMORY_COLUMNS = ['id', 'content', 'created_at', 'updated_at'] as const;

export async function listMemoriesPage(tx: TenantTx, tenantId: string, pageQuery: PageQuery): Promise<Page<Memory>> {
  return fetchPage(tx.selectFrom('memories').select(MEMORY_COLUMNS).where('tenant_id', '=', tenantId), 'id', pageQuery);
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
