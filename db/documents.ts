import type { Db } from './database.js';
import { newId } from './ids.js';
import { strandedPage, type StrandedQuery } from './stranded-query.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { DocumentRow, DocumentStatus } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `documents` table: a knowledge base's uploads, from accepted to ready (or failed), with their Markdown. */

/** Every column but the upload and its Markdown, which can be large. */
const LISTING_COLUMNS = ['id', 'tenant_id', 'kb_id', 'title', 'filename', 'content_type', 'format', 'size_bytes', 'status', 'error', 'chunk_count', 'created_at', 'updated_at'] as const;

export type DocumentListing = Omit<DocumentRow, 'source' | 'markdown'>;

const documentsPage = preparedPage('id', (db, { tenantId, kbId }: { tenantId: string; kbId: string }) =>
  db.selectFrom('documents').select(LISTING_COLUMNS).where('kb_id', '=', kbId).where('tenant_id', '=', tenantId),
);

export async function listDocumentsPage(reader: TenantScoped, tenantId: string, kbId: string, pageQuery: PageQuery): Promise<Page<DocumentListing>> {
  return documentsPage(reader, { tenantId, kbId }, pageQuery);
}

/** The document with its Markdown; undefined when the knowledge base has no such document. */
export async function findDocument(reader: TenantScoped, tenantId: string, kbId: string, documentId: string): Promise<(DocumentListing & Pick<DocumentRow, 'markdown'>) | undefined> {
  return reader
    .selectFrom('documents')
    .select([...LISTING_COLUMNS, 'markdown'])
    .where('id', '=', documentId)
    .where('kb_id', '=', kbId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export type NewDocument = Pick<DocumentRow, 'title' | 'filename' | 'content_type' | 'format' | 'size_bytes' | 'status' | 'error' | 'source' | 'markdown'> &
  Partial<Pick<DocumentRow, 'chunk_count'>>;

export async function insertDocument(tx: TenantTx, tenantId: string, kbId: string, document: NewDocument): Promise<DocumentListing> {
  return tx
    .insertInto('documents')
    .values({ id: newId('doc'), tenant_id: tenantId, kb_id: kbId, ...document })
    .returning(LISTING_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * accepted → queued, once its conversion is started. Answers the document as it now stands: a fast
 * conversion may already have moved it on to converting or ready, and that is what the caller should see.
 */
export async function markDocumentQueued(tx: TenantTx, tenantId: string, documentId: string): Promise<DocumentListing | undefined> {
  const queued = await tx
    .updateTable('documents')
    .set({ status: 'queued', updated_at: new Date() })
    .where('id', '=', documentId)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'accepted')
    .returning(LISTING_COLUMNS)
    .executeTakeFirst();
  return queued ?? tx.selectFrom('documents').select(LISTING_COLUMNS).where('id', '=', documentId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Deletes the document (its chunks go with it); answers its id, or undefined when the knowledge base has no such document. */
export async function deleteDocumentById(tx: TenantTx, tenantId: string, kbId: string, documentId: string): Promise<string | undefined> {
  const deleted = await tx
    .deleteFrom('documents')
    .where('id', '=', documentId)
    .where('kb_id', '=', kbId)
    .where('tenant_id', '=', tenantId)
    .returning('id')
    .executeTakeFirst();
  return deleted?.id;
}

/**
 * accepted or queued → converting (a retried conversion finds it converting); answers what conversion
 * reads. Undefined when the document is gone, or has ended: failed by the stranded-work sweep while its
 * workflow was on the way (workers/stranded-work/), it stays failed.
 */
export async function markDocumentConverting(tx: TenantTx, tenantId: string, documentId: string) {
  return tx
    .updateTable('documents')
    .set({ status: 'converting', updated_at: new Date() })
    .where('id', '=', documentId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', ['accepted', 'queued', 'converting'])
    .returning(['markdown', 'source', 'format', 'content_type', 'status'])
    .executeTakeFirst();
}

/** The converted text, with what the converter skipped as the document's note. */
export async function setDocumentMarkdown(tx: TenantTx, tenantId: string, documentId: string, markdown: string, note: string | null): Promise<void> {
  await tx.updateTable('documents').set({ markdown, error: note, updated_at: new Date() }).where('id', '=', documentId).where('tenant_id', '=', tenantId).execute();
}

/** What embedding reads: the document's knowledge base and Markdown, and how many chunks it has. */
export async function findDocumentMarkdown(tx: TenantTx, tenantId: string, documentId: string): Promise<Pick<DocumentRow, 'id' | 'kb_id' | 'markdown' | 'chunk_count'> | undefined> {
  return tx.selectFrom('documents').select(['id', 'kb_id', 'markdown', 'chunk_count']).where('id', '=', documentId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The number of chunks it was cut into; the upload is no longer needed. */
export async function setDocumentChunkCount(tx: TenantTx, tenantId: string, documentId: string, chunkCount: number): Promise<void> {
  await tx
    .updateTable('documents')
    .set({ chunk_count: chunkCount, source: null, updated_at: new Date() })
    .where('id', '=', documentId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** → ready, with `problem` (if any) as its note; an earlier note stays otherwise. Answers the document (undefined when it is gone). */
export async function setDocumentReady(tx: TenantTx, tenantId: string, documentId: string, problem: string | null): Promise<DocumentListing | undefined> {
  return tx
    .updateTable('documents')
    .set((eb) => ({ status: 'ready', error: problem ?? eb.ref('error'), updated_at: new Date() }))
    .where('id', '=', documentId)
    .where('tenant_id', '=', tenantId)
    .returning(LISTING_COLUMNS)
    .executeTakeFirst();
}

/** → failed with the reason, the upload dropped; only from `from` when given. False when it was not there. */
export async function setDocumentFailed(tx: TenantTx, tenantId: string, documentId: string, error: string, from?: DocumentStatus[]): Promise<boolean> {
  let q = tx.updateTable('documents').set({ status: 'failed', error, source: null, updated_at: new Date() }).where('id', '=', documentId).where('tenant_id', '=', tenantId);
  if (from) q = q.where('status', 'in', from);
  return (await q.returning('id').executeTakeFirst()) !== undefined;
}

/** Every tenant's documents (the owner role) still `accepted` as `query` says (db/stranded-query.ts): their processing never started. */
export async function listStrandedDocuments(db: Db, query: StrandedQuery) {
  return strandedPage(db.selectFrom('documents').select(['id', 'tenant_id']).where('status', '=', 'accepted'), query).execute();
}
