import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { scriptTurn } from '../../activities/guardrails/config-schemas.js';
import { isTextFamily, isConversionError, sniffFormat, textToMarkdown, decodeText, type TextFormat } from '../../activities/conversion/index.js';
import { embedMarkdown, MAX_KNOWLEDGE_K, searchKnowledge } from '../../activities/knowledge/search.js';
import { startDocumentConversion } from '../../activities/knowledge/start-conversion.js';
import { MODEL_ID_PATTERN } from '../../activities/models/model-id-problem.js';
import { insertDocumentChunks, type NewChunk } from '../../db/chunks.js';
import { deleteDocumentById, findDocument, insertDocument, listDocumentsPage, markDocumentQueued, type DocumentListing } from '../../db/documents.js';
import {
  deleteKnowledgeBaseById,
  findKnowledgeBase,
  findKnowledgeBaseByName,
  insertKnowledgeBaseIfNew,
  listKnowledgeBasesPage,
  lockKnowledgeBaseForInsert,
  updateKnowledgeBaseById,
} from '../../db/knowledge-bases.js';
import type { PageQuery } from '../../db/page.js';
import type { KnowledgeBase, KnowledgeGraphSettings } from '../../db/schema.js';
import { defineDeleteOperation } from '../delete-operation.js';
import type { AppDeps } from '../deps.js';
import { upstreamEmbedder } from '../embedder-errors.js';
import { notFound, orNotFound } from '../errors.js';
import { readJsonBody } from '../middleware/json-body.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, listOf, pageQuery, pathParams, timestamp, upsertResultOf } from '../schemas.js';
import { readUpload, UPLOAD_LIMIT_BYTES, type UploadedFile } from '../upload.js';
import { requestValidator } from '../validation.js';

const TAG = 'Knowledge';
/** `search` is taken by POST /v1/knowledge/search, which a concrete path wins over /v1/knowledge/{kb}. */
const kbName = nameSchema({ not: { const: 'search' } });
const kbParams = pathParams(['kb']);
const docParams = pathParams(['kb', 'documentId']);
/** The knowledge base `ref` names, or 404. */
const knowledgeBaseOr404 = refOr404(findKnowledgeBase, 'knowledge base');
const knowledgeBaseLockedOr404 = refOr404(lockKnowledgeBaseForInsert, 'knowledge base');
const graphSettings: JsonSchema = {
  type: ['object', 'null'],
  required: ['model'],
  additionalProperties: false,
  description: 'Entity-relationship extraction for graph search: the model that reads each chunk (and, for `scripted`, its script). null turns it off.',
  properties: {
    // Checked when saved: a bad id would otherwise fail every later upload's ingestion.
    model: { type: 'string', pattern: MODEL_ID_PATTERN, description: '`provider/model` of a known provider, or `scripted`.' },
    script: { type: 'array', items: scriptTurn, description: 'Only with the `scripted` model: its answers, one a chunk in turn.' },
  },
};

const kbSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  graph: { type: ['object', 'null'] },
  document_count: { type: 'integer' },
  created_at: timestamp,
  updated_at: timestamp,
});
const kbBody = closedObject({ knowledge_base: kbSchema });

const documentSchema = closedObject(
  {
    id: { type: 'string' },
    kb_id: { type: 'string' },
    title: { type: 'string' },
    filename: { type: ['string', 'null'] },
    content_type: { type: ['string', 'null'] },
    format: { type: 'string', description: 'What the upload was recognised as: txt, md, html, csv, json, docx, pptx, xlsx, pdf, epub, odt, ... or unsupported.' },
    size_bytes: { type: 'integer' },
    status: { enum: ['accepted', 'queued', 'converting', 'ready', 'failed'] },
    error: { type: ['string', 'null'], description: 'Why the document failed (or what went wrong without stopping it).' },
    chunk_count: { type: 'integer' },
    markdown: { type: ['string', 'null'], description: 'The converted text; only with `?markdown=true`.' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  { optional: ['markdown'] },
);
const documentBody = closedObject({ document: documentSchema });

function kbJson(kb: KnowledgeBase & { document_count?: number | string | null }) {
  return {
    ...pick(kb, ['id', 'name', 'description', 'graph']),
    document_count: Number(kb.document_count ?? 0),
    ...timestampsJson(kb),
  };
}

function documentJson(doc: DocumentListing & { markdown?: string | null }) {
  return {
    ...pick(doc, ['id', 'kb_id', 'title', 'filename', 'content_type', 'format', 'size_bytes', 'status', 'error', 'chunk_count']),
    ...(doc.markdown !== undefined && { markdown: doc.markdown }),
    ...timestampsJson(doc),
  };
}

export const listKnowledgeBases = defineListOperation({
  operationId: 'listKnowledgeBases',
  path: '/v1/knowledge',
  tag: TAG,
  summary: 'Knowledge bases, oldest first',
  plural: 'knowledge_bases',
  pageDescription: 'A page of knowledge bases',
  itemSchema: kbSchema,
  page: listKnowledgeBasesPage,
  toJson: kbJson,
});

export const createKnowledgeBase = defineOperation<Record<string, never>, unknown, { name: string; description?: string; graph?: KnowledgeGraphSettings | null }>({
  operationId: 'createKnowledgeBase',
  method: 'post',
  path: '/v1/knowledge',
  tag: TAG,
  summary: 'Create a knowledge base, or return the existing one with this name',
  access: 'key',
  body: closedObject({ name: kbName, description: { type: 'string', maxLength: 10_000 }, graph: graphSettings }, { required: ['name'] }),
  responses: {
    201: { description: 'Created', schema: upsertResultOf('knowledge_base', kbSchema) },
    200: { description: 'A knowledge base with this name existed; it is returned unchanged', schema: upsertResultOf('knowledge_base', kbSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const { kb, created } = await tenant(async (tx) => {
      const inserted = await insertKnowledgeBaseIfNew(tx, caller.tenantId, { name: body.name, description: body.description ?? null, graph: body.graph ?? null });
      const kb = inserted ?? orNotFound(await findKnowledgeBaseByName(tx, caller.tenantId, body.name), 'knowledge base', body.name);
      return { kb, created: Boolean(inserted) };
    });
    return { status: created ? 201 : 200, body: { knowledge_base: kbJson(kb), created } };
  },
});

export const updateKnowledgeBase = defineOperation<{ kb: string }, unknown, { name?: string; description?: string | null; graph?: KnowledgeGraphSettings | null }>({
  operationId: 'updateKnowledgeBase',
  method: 'patch',
  path: '/v1/knowledge/{kb}',
  tag: TAG,
  summary: 'Rename or re-describe a knowledge base, or change its graph extraction',
  description: 'A new `graph` setting applies to documents uploaded from then on.',
  access: 'key',
  params: kbParams,
  body: {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: { name: kbName, description: { type: ['string', 'null'], maxLength: 10_000 }, graph: graphSettings },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The knowledge base', schema: kbBody } },
  handler: async ({ params, body, caller, tenant }) => {
    const kb = await conflictIfNameTaken(`a knowledge base named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const found = await knowledgeBaseOr404(tx, caller.tenantId, params.kb);
        return updateKnowledgeBaseById(tx, caller.tenantId, found.id, body);
      }),
    );
    return { status: 200, body: { knowledge_base: kbJson(kb) } };
  },
});

export const deleteKnowledgeBase = defineDeleteOperation<{ kb: string }>({
  operationId: 'deleteKnowledgeBase',
  path: '/v1/knowledge/{kb}',
  tag: TAG,
  summary: 'Delete a knowledge base with its documents, chunks and graph',
  params: kbParams,
  find: (tx, tenantId, { kb }) => knowledgeBaseOr404(tx, tenantId, kb),
  deleteById: deleteKnowledgeBaseById,
});

export const listDocuments = defineOperation<{ kb: string }, PageQuery>({
  operationId: 'listDocuments',
  method: 'get',
  path: '/v1/knowledge/{kb}/documents',
  tag: TAG,
  summary: "A knowledge base's documents with their status, oldest first",
  access: 'key',
  params: kbParams,
  query: pageQuery,
  errors: ['not_found'],
  responses: { 200: { description: 'A page of documents', schema: listOf('documents', documentSchema) } },
  handler: async ({ params, query, caller, tenantReads }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const kb = await knowledgeBaseOr404(reader, caller.tenantId, params.kb);
      return listDocumentsPage(reader, caller.tenantId, kb.id, query);
    });
    return { status: 200, body: { documents: items.map(documentJson), next_cursor: nextCursor } };
  },
});

const MAX_TITLE_CHARACTERS = 500;
/** A document's title, sent as JSON or as a form field (a file's name, taken instead, is cut to fit). */
const documentTitle: JsonSchema = { type: 'string', minLength: 1, maxLength: MAX_TITLE_CHARACTERS };

const textDocumentBody = closedObject(
  {
    title: documentTitle,
    text: { type: 'string', minLength: 1 },
    format: { enum: ['md', 'txt', 'html'], default: 'md', description: 'How to read `text`: Markdown (default), plain text or HTML.' },
  },
  { required: ['title', 'text'] },
);
const validateTextDocument = requestValidator('body', textDocumentBody);
// The form's other fields are not this operation's to judge; only its title is held to the JSON rule.
const validateFormTitle = requestValidator('body', { type: 'object', properties: { title: documentTitle } });

export const addDocument = defineOperation<{ kb: string }>({
  operationId: 'addDocument',
  method: 'post',
  path: '/v1/knowledge/{kb}/documents',
  tag: TAG,
  summary: 'Add a document: JSON `title` + `text`, or a multipart `file` (up to 4 MB)',
  description:
    'Answers with the document. JSON text and text-family files (txt, md, csv, json, html, xml, ...) up to 256 KB are ' +
    'decoded and embedded on the spot: searchable, and `ready` unless the knowledge base extracts a graph, when this answers. ' +
    'Larger ones and other formats (docx, pptx, xlsx, pdf, epub, odt, odp, ods) are converted to Markdown and embedded in the background. Follow ' +
    '`status`: accepted → queued → converting → ready, or failed with a human-readable `error`.',
  access: 'key',
  params: kbParams,
  requestBody: {
    required: true,
    content: {
      'application/json': { schema: textDocumentBody },
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', maxLength: UPLOAD_LIMIT_BYTES }, title: documentTitle },
        },
      },
    },
  },
  errors: ['not_found', 'invalid_request', 'payload_too_large', 'unsupported_media_type'],
  responses: { 202: { description: 'Accepted; processing continues in the background', schema: documentBody } },
  handler: async ({ params, caller, tenant, tenantReads, deps, koa }) => {
    // An unknown knowledge base answers 404 before the upload is read or embedded.
    await tenantReads((reader) => knowledgeBaseOr404(reader, caller.tenantId, params.kb));
    const upload = await readDocumentUpload(koa);
    // Text decoded during the request is embedded during it too, searchable when this answers (the
    // spec's "decoded immediately"), and embedded before anything is written: the document, its chunks
    // and (without graph extraction) its `ready` commit together, so a process that dies mid-request
    // leaves no document that nothing would process.
    const inline = upload.status === 'accepted' && upload.markdown !== null && upload.size_bytes <= INLINE_TEXT_LIMIT_BYTES;
    const chunks = inline ? await embeddedAtOnce(deps, upload.markdown!) : undefined;
    const doc = await tenant(async (tx) => {
      // Looked up again and held until the insert commits: embedding a large text takes seconds, and the
      // knowledge base may be gone or going by then.
      const current = await knowledgeBaseLockedOr404(tx, caller.tenantId, params.kb);
      if (!chunks) return insertDocument(tx, caller.tenantId, current.id, upload);
      const embedded = await insertDocument(tx, caller.tenantId, current.id, { ...upload, status: current.graph ? 'accepted' : 'ready', chunk_count: chunks.length });
      await insertDocumentChunks(tx, caller.tenantId, current.id, embedded.id, chunks);
      return embedded;
    });
    if (doc.status === 'failed' || doc.status === 'ready') return { status: 202, body: { document: documentJson(doc) } };

    // Conversions, graph extraction, and text the embedder could not take now. The document is recorded
    // (`accepted`) whether or not Temporal takes the start now: when it does not, the stranded-work sweep
    // starts it later (workers/stranded-work/), so the upload is still accepted.
    try {
      await startDocumentConversion(deps.temporal, { tenantId: caller.tenantId, documentId: doc.id });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        console.error(`[api] document ${doc.id} is accepted; its processing could not be started now, the sweep will start it:`, err instanceof Error ? err.message : err);
        return { status: 202, body: { document: documentJson(doc) } };
      }
    }
    const queued = await tenant((tx) => markDocumentQueued(tx, caller.tenantId, doc.id));
    return { status: 202, body: { document: documentJson(queued ?? doc) } };
  },
});

/**
 * Text-family uploads up to this size are decoded, turned into Markdown and embedded during the request
 * (as is JSON text up to this size); larger ones (a 4 MB HTML page takes seconds to convert, and
 * embedding 4,000 chunks longer) go to the background conversion like any other file.
 */
const INLINE_TEXT_LIMIT_BYTES = 256 * 1024;

/**
 * A text document's chunks, embedded during its upload. Undefined when that failed (the embedder is
 * down, say): the convertDocument workflow then embeds it with its retries, and fails the document with
 * the reason if it cannot.
 */
async function embeddedAtOnce(deps: AppDeps, markdown: string): Promise<NewChunk[] | undefined> {
  try {
    return await embedMarkdown(deps.embedder(), markdown);
  } catch {
    return undefined;
  }
}

/**
 * The upload as a document row: small text-family content decoded to Markdown now, anything else kept
 * as the file for the background conversion, and what cannot be read a `failed` document with the reason.
 */
async function readDocumentUpload(koa: Parameters<typeof readUpload>[0]) {
  if (koa.is('multipart/form-data')) {
    const file = await readUpload(koa, 'file');
    const sniff = await sniffFormat(file.bytes, file.filename, file.contentType);
    const base = { title: uploadTitle(file), filename: file.filename, content_type: file.contentType ?? null, format: sniff.format, size_bytes: file.bytes.length };
    if (sniff.format === 'unsupported' || sniff.failure) {
      const reason = sniff.failure?.message ?? `this file type is not supported (${file.contentType ?? 'unknown type'})`;
      return { ...base, status: 'failed' as const, error: reason, source: null, markdown: null };
    }
    if (isTextFamily(sniff.format) && file.bytes.length <= INLINE_TEXT_LIMIT_BYTES) {
      return { ...base, ...textToDocument(decodeText(file.bytes, file.contentType), sniff.format) };
    }
    return { ...base, status: 'accepted' as const, error: null, source: file.bytes, markdown: null };
  }
  const body = await readJsonBody(koa);
  validateTextDocument(body);
  const { title, text, format } = body as { title: string; text: string; format: TextFormat };
  return { title, filename: null, content_type: null, format, size_bytes: Buffer.byteLength(text), ...textToDocument(text, format) };
}

/**
 * A file's title: the form's `title`, held to the JSON upload's rule, or else the file's name (cut to
 * the same length; one that is only a folder, as `folder/`, has an empty base name).
 */
function uploadTitle(file: UploadedFile): string {
  validateFormTitle(file.fields);
  return file.fields.title ?? [...(file.filename || 'upload')].slice(0, MAX_TITLE_CHARACTERS).join('');
}

function textToDocument(text: string, format: TextFormat) {
  try {
    const { markdown } = textToMarkdown(text, format);
    return { status: 'accepted' as const, error: null, source: null, markdown };
  } catch (err) {
    if (!isConversionError(err)) throw err;
    return { status: 'failed' as const, error: (err as Error).message, source: null, markdown: null };
  }
}

export const getDocument = defineOperation<{ kb: string; documentId: string }, { markdown?: boolean }>({
  operationId: 'getDocument',
  method: 'get',
  path: '/v1/knowledge/{kb}/documents/{documentId}',
  tag: TAG,
  summary: 'A document and its status (with `?markdown=true`, its converted text)',
  access: 'key',
  params: docParams,
  query: { type: 'object', additionalProperties: false, properties: { markdown: { type: 'boolean', default: false } } },
  errors: ['not_found'],
  responses: { 200: { description: 'The document', schema: documentBody } },
  handler: async ({ params, query, caller, tenantReads }) => {
    const doc = await tenantReads(async (reader) => {
      const kb = await knowledgeBaseOr404(reader, caller.tenantId, params.kb);
      return findDocument(reader, caller.tenantId, kb.id, params.documentId);
    });
    if (!doc) throw notFound('document', params.documentId);
    const { markdown, ...rest } = doc;
    return { status: 200, body: { document: documentJson(query.markdown ? { ...rest, markdown } : rest) } };
  },
});

export const deleteDocument = defineDeleteOperation<{ kb: string; documentId: string }>({
  operationId: 'deleteDocument',
  path: '/v1/knowledge/{kb}/documents/{documentId}',
  tag: TAG,
  summary: 'Delete a document with its chunks',
  params: docParams,
  remove: async (tx, tenantId, { kb: ref, documentId }) => {
    const kb = await knowledgeBaseOr404(tx, tenantId, ref);
    return orNotFound(await deleteDocumentById(tx, tenantId, kb.id, documentId), 'document', documentId);
  },
});

const hitSchema = closedObject({
  content: { type: 'string' },
  document_id: { type: 'string' },
  similarity: { type: 'number', description: 'Cosine similarity to the query, 1 at best.' },
  chunk_id: { type: 'string' },
  title: { type: 'string', description: "The document's title." },
  kb: { type: 'string', description: "The knowledge base's name." },
  heading_path: { type: 'array', items: { type: 'string' } },
  via: { enum: ['vector', 'graph'], description: '`graph`: reached through an entity related to a nearest chunk’s.' },
});

export const searchKnowledgeBases = defineOperation<Record<string, never>, unknown, { query: string; kb?: string; k: number; mode: 'vector' | 'graph'; hops: number }>({
  operationId: 'searchKnowledge',
  method: 'post',
  path: '/v1/knowledge/search',
  tag: TAG,
  summary: 'The chunks most similar to a query (cosine), best first',
  description:
    '`mode: "graph"` also returns chunks that mention entities within `hops` relations of the entities in the nearest ' +
    'chunks (knowledge bases with graph extraction), marked `via: "graph"`.',
  access: 'key',
  body: closedObject(
    {
      query: { type: 'string', minLength: 1, maxLength: 20_000 },
      kb: { type: 'string', minLength: 1, description: 'Search this knowledge base only (name).' },
      k: { type: 'integer', minimum: 1, maximum: MAX_KNOWLEDGE_K, default: 5 },
      mode: { enum: ['vector', 'graph'], default: 'vector' },
      hops: { type: 'integer', minimum: 1, maximum: 3, default: 1 },
    },
    { required: ['query'] },
  ),
  errors: ['not_found', 'upstream_error'],
  responses: { 200: { description: 'The hits', schema: closedObject({ hits: { type: 'array', items: hitSchema } }) } },
  handler: async ({ body, caller, tenant, deps }) => {
    const kbId = body.kb ? (await tenant((tx) => knowledgeBaseOr404(tx, caller.tenantId, body.kb!))).id : undefined;
    const hits = await searchKnowledge(deps.db, upstreamEmbedder(deps.embedder()), caller.tenantId, { query: body.query, kbId, k: body.k, mode: body.mode, hops: body.hops });
    return { status: 200, body: { hits } };
  },
});

export default [
  listKnowledgeBases,
  createKnowledgeBase,
  searchKnowledgeBases,
  updateKnowledgeBase,
  deleteKnowledgeBase,
  listDocuments,
  addDocument,
  getDocument,
  deleteDocument,
];
