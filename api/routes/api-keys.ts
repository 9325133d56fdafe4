import { insertApiKey, listApiKeysPage, revokeApiKeyById } from '../../db/api-keys.js';
import type { ApiKey } from '../../db/schema.js';
import { orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { deletionResult, refParams, timestamp } from '../schemas.js';

const TAG = 'API keys';

const apiKeySchema: JsonSchema = {
  type: 'object',
  required: ['id', 'kind', 'name', 'prefix', 'created_at', 'revoked_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    kind: { enum: ['management', 'standard'] },
    name: { type: ['string', 'null'] },
    prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.' },
    created_at: timestamp,
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

function apiKeyJson(key: ApiKey) {
  return {
    id: key.id,
    kind: key.kind,
    name: key.name,
    prefix: key.key_prefix,
    created_at: key.created_at.toISOString(),
    revoked_at: key.revoked_at?.toISOString() ?? null,
  };
}

export const listApiKeys = defineListOperation({
  operationId: 'listApiKeys',
  path: '/v1/api-keys',
  tag: TAG,
  summary: "List the workspace's API keys, revoked ones included (management keys only)",
  access: 'management',
  plural: 'api_keys',
  pageDescription: 'A page of keys',
  itemSchema: apiKeySchema,
  page: listApiKeysPage,
  toJson: apiKeyJson,
});

export const createApiKey = defineOperation<Record<string, never>, unknown, { kind?: 'management' | 'standard'; name?: string }>({
  operationId: 'createApiKey',
  method: 'post',
  path: '/v1/api-keys',
  tag: TAG,
  summary: 'Create an API key; the key itself is in this response only (management keys only)',
  access: 'management',
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { kind: { enum: ['management', 'standard'], default: 'standard' }, name: { type: 'string', maxLength: 200 } },
  },
  responses: {
    201: {
      description: 'The new key',
      schema: {
        type: 'object',
        required: ['api_key', 'key'],
        additionalProperties: false,
        properties: { api_key: apiKeySchema, key: { type: 'string', pattern: '^svc_sk_' } },
      },
    },
  },
  handler: async ({ body, caller, tenant }) => {
    const { record, key } = await tenant((tx) => insertApiKey(tx, caller.tenantId, body?.kind ?? 'standard', body?.name ?? null));
    return { status: 201, body: { api_key: apiKeyJson(record), key } };
  },
});

export const revokeApiKey = defineOperation<{ id: string }>({
  operationId: 'revokeApiKey',
  method: 'delete',
  path: '/v1/api-keys/{id}',
  tag: TAG,
  summary: 'Revoke an API key; requests with it answer 401 from now on (management keys only)',
  access: 'management',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'Revoked', schema: deletionResult } },
  handler: async ({ params, caller, tenant }) => {
    const revoked = orNotFound(await tenant((tx) => revokeApiKeyById(tx, caller.tenantId, params.id)), 'api key', params.id);
    return { status: 200, body: { deleted: true, id: revoked } };
  },
});

export default [listApiKeys, createApiKey, revokeApiKey];
