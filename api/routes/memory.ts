import { MAX_SEARCH_K, rewriteMemory, searchMemory, writeMemory } from '../../activities/memory/memory.js';
import { deleteMemoryById, listMemoriesPage } from '../../db/memories.js';
import { upstreamEmbedder } from '../embedder-errors.js';
import { notFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { timestampsJson } from '../row-json.js';
import { closedObject, deletionResult, pathParams, timestamp } from '../schemas.js';

const TAG = 'Memory';
const content: JsonSchema = { type: 'string', minLength: 1, maxLength: 20_000 };
const idParams = pathParams(['id']);

const memorySchema = closedObject({ id: { type: 'string' }, content: { type: 'string' }, created_at: timestamp, updated_at: timestamp });
const memoryBody = closedObject({ memory: memorySchema });

function memoryJson(row: { id: string; content: string; created_at: Date; updated_at: Date }) {
  return { id: row.id, content: row.content, ...timestampsJson(row) };
}

export const listMemories = defineListOperation({
  operationId: 'listMemories',
  path: '/v1/memory',
  tag: TAG,
  summary: 'Memories, oldest first',
  plural: 'memories',
  pageDescription: 'A page of memories',
  itemSchema: memorySchema,
  page: listMemoriesPage,
  toJson: memoryJson,
});

export const createMemory = defineOperation<Record<string, never>, unknown, { content: string }>({
  operationId: 'createMemory',
  method: 'post',
  path: '/v1/memory',
  tag: TAG,
  summary: 'Remember something; it is embedded for semantic recall',
  access: 'key',
  body: closedObject({ content }),
  errors: ['upstream_error'],
  responses: { 201: { description: 'Stored', schema: memoryBody } },
  handler: async ({ body, caller, deps }) => {
    const row = await writeMemory(deps.db, upstreamEmbedder(deps.embedder()), caller.tenantId, body.content);
    return { status: 201, body: { memory: memoryJson(row) } };
  },
});

export const searchMemories = defineOperation<Record<string, never>, unknown, { query: string; k: number }>({
  operationId: 'searchMemory',
  method: 'post',
  path: '/v1/memory/search',
  tag: TAG,
  summary: 'The memories most similar to a query (cosine), best first',
  access: 'key',
  body: closedObject(
    { query: { type: 'string', minLength: 1, maxLength: 20_000 }, k: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_K, default: 5 } },
    { required: ['query'] },
  ),
  errors: ['upstream_error'],
  responses: {
    200: {
      description: 'The hits',
      schema: closedObject({
        hits: { type: 'array', items: closedObject({ id: { type: 'string' }, content: { type: 'string' }, similarity: { type: 'number' } }) },
      }),
    },
  },
  handler: async ({ body, caller, deps }) => {
    const hits = await searchMemory(deps.db, upstreamEmbedder(deps.embedder()), caller.tenantId, body.query, body.k);
    return { status: 200, body: { hits } };
  },
});

export const updateMemory = defineOperation<{ id: string }, unknown, { content: string }>({
  operationId: 'updateMemory',
  method: 'patch',
  path: '/v1/memory/{id}',
  tag: TAG,
  summary: 'Rewrite a memory; it is embedded again (management keys only)',
  access: 'management',
  params: idParams,
  body: closedObject({ content }),
  errors: ['not_found', 'upstream_error'],
  responses: { 200: { description: 'The memory', schema: memoryBody } },
  handler: async ({ params, body, caller, deps }) => {
    const row = await rewriteMemory(deps.db, upstreamEmbedder(deps.embedder()), caller.tenantId, params.id, body.content);
    if (!row) throw notFound('memory', params.id);
    return { status: 200, body: { memory: memoryJson(row) } };
  },
});

export const deleteMemory = defineOperation<{ id: string }>({
  operationId: 'deleteMemory',
  method: 'delete',
  path: '/v1/memory/{id}',
  tag: TAG,
  summary: 'Forget a memory; idempotent (`deleted: false` when nothing was there)',
  access: 'key',
  params: idParams,
  responses: { 200: { description: 'Whether something was deleted', schema: deletionResult } },
  handler: async ({ params, caller, tenant }) => {
    const deleted = await tenant((tx) => deleteMemoryById(tx, caller.tenantId, params.id));
    return { status: 200, body: { deleted, id: params.id } };
  },
});

export default [listMemories, createMemory, searchMemories, updateMemory, deleteMemory];
