import { insertApiKey, LastManagementKeyError, listApiKeysPage, revokeApiKeyById } from '../../db/api-keys.js';
import type { ApiKey } from '../../db/schema.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { ApiError, orNotFound } from '../errors.js';
import { defineOperation } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { pick } from '../row-json.js';
import { closedObject, nullableTimestamp, refParams, timestamp } from '../schemas.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'API keys';

const apiKeySchema = closedObject({
  id: { type: 'string' },
  kind: { enum: ['management', 'standard'] },
  name: { type: ['string', 'null'] },
  prefix: { type: 'string', description: 'The first characters of the key, to tell keys apart.' },
  created_at: timestamp,
  revoked_at: nullableTimestamp,
});

function apiKeyJson(key: ApiKey) {
  return {
    ...pick(key, ['id', 'kind', 'name']),
    prefix: key.key_prefix,
    created_at: isoTimestamp(key.created_at),
    revoked_at: isoTimestampOrNull(key.revoked_at),
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
  responses: { 201: { description: 'The new key', schema: closedObject({ api_key: apiKeySchema, key: { type: 'string', pattern: '^svc_sk_' } }) } },
  handler: async ({ body, caller, tenant }) => {
    const { record, key } = await tenant((tx) => insertApiKey(tx, caller.tenantId, body?.kind ?? 'standard', body?.name ?? null));
    return { status: 201, body: { api_key: apiKeyJson(record), key } };
  },
});

export const revokeApiKey = defineDeleteOperation<{ id: string }>({
  operationId: 'revokeApiKey',
  path: '/v1/api-keys/{id}',
  tag: TAG,
  summary: "Revoke an API key; requests with it answer 401 from now on (management keys only). The workspace's last active management key cannot be revoked (409)",
  access: 'management',
  params: refParams,
  resultDescription: 'Revoked',
  errors: ['not_found', 'conflict'],
  remove: async (tx, tenantId, { id }) => {
    try {
      return orNotFound(await revokeApiKeyById(tx, tenantId, id), 'api key', id);
    } catch (err) {
      if (err instanceof LastManagementKeyError) throw new ApiError('conflict', err.message);
      throw err;
    }
  },
});

export default [listApiKeys, createApiKey, revokeApiKey];
