import type { ActivityDeps } from '../deps.js';
import { convertDocumentSource, embedDocumentChunks, extractGraph, failDocument, markDocumentReady } from './ingest.js';
import type { DocumentRef } from '../../workflows/convert-document-api.js';

/** The `convertDocument` workflow's activities: an uploaded document from source to searchable chunks. */
export function knowledgeActivities({ db, embedder }: ActivityDeps) {
  return {
    convertDocumentSource: (ref: DocumentRef) => convertDocumentSource(db, ref),
    embedDocumentChunks: (ref: DocumentRef) => embedDocumentChunks(db, embedder(), ref),
    extractGraph: (ref: DocumentRef) => extractGraph(db, ref),
    failDocument: (ref: DocumentRef & { error: string }) => failDocument(db, ref),
    markDocumentReady: (ref: DocumentRef & { problem: string | null }) => markDocumentReady(db, ref),
  };
}
