import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByName, findByRef } from './refs.js';
import type { KnowledgeBase, KnowledgeGraphSettings } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `knowledge_bases` table: named collections of documents, searched together. */

export type KnowledgeBaseWithCount = KnowledgeBase & { document_count: number };

/** The knowledge base `ref` names: by id, else by name (db/refs.ts). */
export async function findKnowledgeBase(reader: TenantScoped, tenantId: string, ref: string): Promise<KnowledgeBase | undefined> {
  return findByRef(reader.selectFrom('knowledge_bases').selectAll(), 'knowledge_bases', tenantId, ref);
}

/**
 * The knowledge base `ref` names, locked against deletion (FOR KEY SHARE) until the transaction ends:
 * for adding rows that reference it, so a delete cannot slip in between the lookup and the insert.
 */
export async function lockKnowledgeBaseForInsert(tx: TenantTx, tenantId: string, ref: string): Promise<KnowledgeBase | undefined> {
  return findByRef(tx.selectFrom('knowledge_bases').selectAll().forKeyShare(), 'knowledge_bases', tenantId, ref);
}

/** The knowledge base named `name` (by name only: an upsert by name whose name is taken). */
export async function findKnowledgeBaseByName(tx: TenantTx, tenantId: string, name: string): Promise<KnowledgeBase | undefined> {
  return findByName(tx.selectFrom('knowledge_bases').selectAll(), 'knowledge_bases', tenantId, name);
}

const knowledgeBasesPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) =>
  db
    .selectFrom('knowledge_bases')
    .selectAll('knowledge_bases')
    .select((eb) => eb.selectFrom('documents').select(eb.fn.countAll<number>().as('n')).whereRef('documents.kb_id', '=', 'knowledge_bases.id').as('document_count'))
    .where('tenant_id', '=', tenantId),
);

/** A page of knowledge bases, each with its number of documents. */
export async function listKnowledgeBasesPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<KnowledgeBaseWithCount>> {
  const { items, nextCursor } = await knowledgeBasesPage(reader, { tenantId }, pageQuery);
  return { items: items.map((kb) => ({ ...kb, document_count: Number(kb.document_count ?? 0) })), nextCursor };
}

export interface KnowledgeBaseFields {
  name: string;
  description: string | null;
  graph: KnowledgeGraphSettings | null;
}

/** Creates the knowledge base unless the workspace has one by this name (then undefined). */
export async function insertKnowledgeBaseIfNew(tx: TenantTx, tenantId: string, fields: KnowledgeBaseFields): Promise<KnowledgeBase | undefined> {
  return tx
    .insertInto('knowledge_bases')
    .values({ id: newId('kb'), tenant_id: tenantId, ...fields, graph: fields.graph ? JSON.stringify(fields.graph) : null })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Changes the fields given (an absent field stays as it is). */
export async function updateKnowledgeBaseById(tx: TenantTx, tenantId: string, kbId: string, changes: Partial<KnowledgeBaseFields>): Promise<KnowledgeBase> {
  return tx
    .updateTable('knowledge_bases')
    .set({
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.graph !== undefined && { graph: changes.graph ? JSON.stringify(changes.graph) : null }),
      updated_at: new Date(),
    })
    .where('id', '=', kbId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the knowledge base; its documents, chunks and graph go with it (on delete cascade). */
export async function deleteKnowledgeBaseById(tx: TenantTx, tenantId: string, kbId: string): Promise<void> {
  await tx.deleteFrom('knowledge_bases').where('id', '=', kbId).where('tenant_id', '=', tenantId).execute();
}

/** The graph extraction settings of the document's knowledge base (null when it extracts none); undefined when the document is gone. */
export async function findGraphSettingsOfDocument(tx: TenantTx, tenantId: string, documentId: string): Promise<KnowledgeGraphSettings | null | undefined> {
  const row = await tx
    .selectFrom('documents')
    .innerJoin('knowledge_bases', 'knowledge_bases.id', 'documents.kb_id')
    .select('knowledge_bases.graph')
    .where('documents.id', '=', documentId)
    .where('documents.tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.graph;
}
