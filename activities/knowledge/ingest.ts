import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../../db/database.js';
import { markDocumentConverting, setDocumentFailed, setDocumentMarkdown, setDocumentReady } from '../../db/documents.js';
import { findGraphSettingsOfDocument } from '../../db/knowledge-bases.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { convertToMarkdownIsolated, isConversionError, type DocumentFormat } from '../conversion/index.js';
import type { Embedder } from '../embedding/index.js';
import { extractDocumentGraph } from './graph-extraction.js';
import { isRetryableModelError } from '../models/errors.js';
import { embedDocument } from './search.js';
import { CONVERT_DOCUMENT_FAILURES, type DocumentRef } from '../../workflows/convert-document-api.js';

/** The `convertDocument` workflow's activities: a document from upload to searchable chunks. */


const HEARTBEAT_EVERY_MS = 1000;

/**
 * Converts the stored upload to Markdown (a text upload already is), moving the document to
 * `converting`. A file that cannot be converted fails the document with the converter's explanation and
 * answers false; nothing is embedded.
 */
export async function convertDocumentSource(db: Db, ref: DocumentRef): Promise<boolean> {
  const doc = await withTenant(db, ref.tenantId, (tx) => markDocumentConverting(tx, ref.tenantId, ref.documentId));
  if (!doc) throw ApplicationFailure.nonRetryable(`document ${ref.documentId} no longer exists or has ended`, CONVERT_DOCUMENT_FAILURES.DocumentMissing);
  if (doc.markdown !== null) return true;
  if (!doc.source) {
    await failDocument(db, { ...ref, error: 'the upload is missing' });
    return false;
  }
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    // In a worker thread with a heap cap, terminated at the deadline: a hostile file cannot stall this worker.
    const { markdown, warnings } = await convertToMarkdownIsolated(doc.source, doc.format as DocumentFormat, {
      signal: context.cancellationSignal,
      contentType: doc.content_type ?? undefined,
    });
    // What the converter skipped (external links, text-less pages, cut-off sheets) is the document's note.
    const note = warnings.length ? warnings.join(' ') : null;
    await withTenant(db, ref.tenantId, (tx) => setDocumentMarkdown(tx, ref.tenantId, ref.documentId, markdown, note));
    return true;
  } catch (err) {
    if (!isConversionError(err)) throw err;
    await failDocument(db, { ...ref, error: (err as Error).message });
    return false;
  } finally {
    clearInterval(heartbeat);
  }
}

/** Chunks and embeds the Markdown. */
export async function embedDocumentChunks(db: Db, embedder: Embedder, ref: DocumentRef): Promise<number> {
  const context = Context.current();
  return embedDocument(db, embedder, ref.tenantId, ref.documentId, () => context.heartbeat());
}

/** When the knowledge base extracts a graph: the document's entities and relations. */
export async function extractGraph(db: Db, ref: DocumentRef): Promise<{ entities: number; relations: number } | null> {
  const graph = await withTenant(db, ref.tenantId, (tx) => findGraphSettingsOfDocument(tx, ref.tenantId, ref.documentId));
  if (!graph) return null;
  const context = Context.current();
  try {
    return await extractDocumentGraph(db, ref.tenantId, ref.documentId, graph, context.cancellationSignal, () => context.heartbeat());
  } catch (err) {
    // A model that cannot work (unknown provider, no API key) will not work on the next attempt either.
    if (!isRetryableModelError(err)) throw ApplicationFailure.nonRetryable((err as Error).message, CONVERT_DOCUMENT_FAILURES.ModelConfiguration);
    throw err;
  }
}

/** Marks the document failed (the workflow's last word when a step gave up). */
export async function failDocument(db: Db, ref: DocumentRef & { error: string }): Promise<void> {
  await withTenant(db, ref.tenantId, (tx) => setDocumentFailed(tx, ref.tenantId, ref.documentId, ref.error));
}

/** The end of processing: the document is `ready` (with `problem`, if any, as its note). */
export async function markDocumentReady(db: Db, ref: DocumentRef & { problem: string | null }): Promise<void> {
  await withTenant(db, ref.tenantId, (tx) => setDocumentReady(tx, ref.tenantId, ref.documentId, ref.problem));
}
