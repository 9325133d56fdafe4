import { checkProviderConnection } from '../../activities/models/connection-check.js';
import { DEFAULT_BASE_URLS } from '../../activities/models/provider-connection.js';
import { openProviderConnection } from '../../activities/models/workspace-connections.js';
import { ModelConfigurationError } from '../../activities/models/errors.js';
import { sealSecret } from '../../activities/secrets/secret-box.js';
import {
  deleteProviderConnectionById,
  findProviderConnection,
  insertProviderConnectionIfNew,
  listProviderConnectionsPage,
  newProviderConnectionId,
  secretContext,
  updateProviderConnectionById,
  type StoredProviderConnection,
} from '../../db/provider-connections.js';
import type { ProviderConnectionRow, ProviderKind, ProviderModelPrice } from '../../db/schema.js';
import { ApiError, invalidRequest, orNotFound, type FieldError } from '../errors.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { sealingOr503 } from '../unavailable-secrets.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, pathParams, timestamp, upsertResultOf } from '../schemas.js';

const TAG = 'Providers';
const KINDS: ProviderKind[] = ['openai', 'anthropic', 'openai_compatible'];
/** Header values are write-only, as a tool's are: they often carry credentials. */
const REDACTED = '[redacted]';
/** A key this short would be shown a quarter or more by its last four characters. */
const MIN_KEY_CHARS_FOR_LAST4 = 16;
const nameParams = pathParams(['name'], 200);

const providerName: JsonSchema = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9_-]*$',
  maxLength: 64,
  not: { const: 'scripted' },
  description: 'The `provider` part of `provider/model` ids. `scripted` is the built-in test model and cannot be taken; `openai`, `anthropic` or `ollama` override the server\'s own provider for this workspace.',
};
const baseUrl: JsonSchema = {
  type: 'string',
  maxLength: 2000,
  // No credentials, query or fragment: the SDKs append paths to it.
  pattern: '^https?://[A-Za-z0-9.:\\[\\]_-]+(/[A-Za-z0-9._~!$&\'()*+,;=:@%/-]*)?$',
  description: 'Where the provider answers, e.g. `https://api.openai.com/v1`. Defaults to OpenAI\'s or Anthropic\'s for those kinds; required for `openai_compatible`.',
};
const apiKey: JsonSchema = { type: 'string', minLength: 1, maxLength: 4000, pattern: '^[\\x21-\\x7e]+$', description: 'Write-only: stored encrypted, never returned.' };
const headers: JsonSchema = {
  type: 'object',
  maxProperties: 32,
  propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", maxLength: 100 },
  additionalProperties: { type: 'string', maxLength: 4000, pattern: '^[\\x20-\\x7e]*$' },
  description: 'Extra request headers sent with every call. Values are write-only (stored encrypted, read back as "[redacted]").',
};
const decimal: JsonSchema = { type: 'string', pattern: '^[0-9]{1,12}(\\.[0-9]{1,18})?$' };
const prices: JsonSchema = {
  type: 'object',
  maxProperties: 500,
  propertyNames: { minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' },
  additionalProperties: closedObject({ prompt: decimal, completion: decimal }),
  description: 'USD per million tokens by model name (the part after `provider/`), or `*` for every model: `{"gpt-4.1-mini": {"prompt": "0.4", "completion": "1.6"}}`. Overrides the built-in prices for this workspace.',
};

const providerSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  kind: { enum: KINDS },
  base_url: { type: 'string' },
  has_api_key: { type: 'boolean' },
  api_key_last4: { type: ['string', 'null'], description: 'The key\'s last four characters; null without a key or when the key is shorter than 16 characters.' },
  headers: { type: 'object', additionalProperties: { const: REDACTED } },
  prices: { type: 'object', additionalProperties: closedObject({ prompt: { type: 'string' }, completion: { type: 'string' } }) },
  created_at: timestamp,
  updated_at: timestamp,
});

interface ProviderBody {
  name: string;
  kind: ProviderKind;
  base_url?: string;
  api_key?: string;
  headers?: Record<string, string>;
  prices?: Record<string, ProviderModelPrice>;
}

type ProviderChanges = Partial<Omit<ProviderBody, 'api_key' | 'headers' | 'prices'>> & {
  api_key?: string | null;
  headers?: Record<string, string> | null;
  prices?: Record<string, ProviderModelPrice> | null;
};

function providerJson(row: ProviderConnectionRow) {
  return {
    ...pick(row, ['id', 'name', 'kind', 'base_url']),
    has_api_key: row.api_key !== null,
    api_key_last4: row.api_key_last4,
    headers: Object.fromEntries(row.header_names.map((name) => [name, REDACTED])),
    prices: row.prices,
    ...timestampsJson(row),
  };
}

export const listProviders = defineListOperation({
  operationId: 'listProviders',
  path: '/v1/providers',
  tag: TAG,
  summary: 'The workspace\'s model provider connections, oldest first',
  plural: 'providers',
  pageDescription: 'A page of provider connections',
  itemSchema: providerSchema,
  page: listProviderConnectionsPage,
  toJson: providerJson,
});

export const createProvider = defineOperation<Record<string, never>, unknown, ProviderBody>({
  operationId: 'createProvider',
  method: 'post',
  path: '/v1/providers',
  tag: TAG,
  summary: 'Connect a model provider, or return the existing connection with this name unchanged',
  description:
    'Runs resolve `provider/model` through the workspace\'s connections first, then the server\'s environment. ' +
    '`api_key` and header values are encrypted at rest and never returned; storing them needs SECRETS_KEY on the server: without it, ' +
    'a new connection with an `api_key` or `headers` answers 503 `unavailable` (keyless connections still work). ' +
    'A name that exists answers 200 with that connection as it is (the spec\'s upsert by name), checked before anything is stored; change one with PATCH. ' +
    'Requests to private or loopback addresses are refused at call time unless the operator allow-lists them (TOOL_HTTP_ALLOW_HOSTS). See docs/providers.md.',
  access: 'management',
  body: {
    ...closedObject({ name: providerName, kind: { enum: KINDS }, base_url: baseUrl, api_key: apiKey, headers, prices }, { required: ['name', 'kind'] }),
    allOf: [
      { if: { properties: { kind: { const: 'openai_compatible' } }, required: ['kind'] }, then: { required: ['base_url'], properties: { base_url: baseUrl } } },
      { if: { properties: { kind: { enum: ['openai', 'anthropic'] } }, required: ['kind'] }, then: { required: ['api_key'], properties: { api_key: apiKey } } },
    ],
  },
  responses: {
    201: { description: 'Created', schema: upsertResultOf('provider', providerSchema) },
    200: { description: 'A connection with this name existed; it is returned unchanged', schema: upsertResultOf('provider', providerSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const baseURL = body.base_url ?? DEFAULT_BASE_URLS[body.kind]!;
    checkBaseUrl(baseURL);
    // An existing name answers as it is before anything is sealed (so also without SECRETS_KEY).
    const existing = await tenant((tx) => findProviderConnection(tx, caller.tenantId, body.name));
    if (existing) return { status: 200, body: { provider: providerJson(existing), created: false } };
    const id = newProviderConnectionId();
    const values = await storedConnection(caller.tenantId, id, body.kind, baseURL, { apiKey: body.api_key, headers: body.headers ?? {} }, body.prices ?? {});
    const { row, created } = await tenant(async (tx) => {
      const inserted = await insertProviderConnectionIfNew(tx, caller.tenantId, id, body.name, values);
      const row = inserted ?? orNotFound(await findProviderConnection(tx, caller.tenantId, body.name), 'provider', body.name);
      return { row, created: Boolean(inserted) };
    });
    return { status: created ? 201 : 200, body: { provider: providerJson(row), created } };
  },
});

export const getProvider = defineOperation<{ name: string }>({
  operationId: 'getProvider',
  method: 'get',
  path: '/v1/providers/{name}',
  tag: TAG,
  summary: 'A provider connection (its key and header values are never shown)',
  access: 'key',
  params: nameParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The connection', schema: closedObject({ provider: providerSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const row = await tenantReads((reader) => providerOr404(reader, caller.tenantId, params.name));
    return { status: 200, body: { provider: providerJson(row) } };
  },
});

export const updateProvider = defineOperation<{ name: string }, unknown, ProviderChanges>({
  operationId: 'updateProvider',
  method: 'patch',
  path: '/v1/providers/{name}',
  tag: TAG,
  summary: 'Rename a provider connection or change what it holds',
  description:
    'Fields left out stay as they are. `api_key` replaces the key (null removes it); `headers` and `prices` replace the whole map ' +
    '(send the header values again, not the "[redacted]" read back; null removes them). A new `kind` without `base_url` moves a ' +
    'connection on the old kind\'s default address to the new kind\'s. A change of `kind` or of the base URL\'s origin (scheme, host, port) ' +
    'must carry `api_key`, and `headers` when some are stored (400 naming the field otherwise): stored secrets are never sent to a new ' +
    'destination. Setting `api_key` or `headers` needs SECRETS_KEY on the server (503 `unavailable` without it).',
  access: 'management',
  params: nameParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: providerName,
      kind: { enum: KINDS },
      base_url: baseUrl,
      api_key: { anyOf: [apiKey, { type: 'null' }] },
      headers: { anyOf: [headers, { type: 'null' }] },
      prices: { anyOf: [prices, { type: 'null' }] },
    },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The connection as changed', schema: closedObject({ provider: providerSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    const row = await conflictIfNameTaken(`a provider connection named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const current = await providerOr404(tx, caller.tenantId, params.name);
        const kind = body.kind ?? current.kind;
        const keptDefault = body.kind !== undefined && current.base_url === DEFAULT_BASE_URLS[current.kind] ? DEFAULT_BASE_URLS[kind] : undefined;
        const baseURL = body.base_url ?? keptDefault ?? current.base_url;
        checkBaseUrl(baseURL);
        requireSecretsOnNewDestination(current, kind, baseURL, body);
        // Secrets left out stay sealed as they are; given ones are sealed anew.
        const secrets = {
          apiKey: body.api_key === undefined ? undefined : body.api_key,
          headers: body.headers === undefined ? undefined : (body.headers ?? {}),
        };
        const values = await storedConnection(caller.tenantId, current.id, kind, baseURL, secrets, body.prices === undefined ? current.prices : (body.prices ?? {}), current);
        return updateProviderConnectionById(tx, caller.tenantId, current.id, body.name ?? current.name, values);
      }),
    );
    return { status: 200, body: { provider: providerJson(row) } };
  },
});

export const deleteProvider = defineDeleteOperation<{ name: string }>({
  operationId: 'deleteProvider',
  path: '/v1/providers/{name}',
  tag: TAG,
  summary: 'Delete a provider connection (its models fall back to the server\'s own provider of that name, if any)',
  access: 'management',
  params: nameParams,
  find: (tx, tenantId, { name }) => providerOr404(tx, tenantId, name),
  deleteById: deleteProviderConnectionById,
});

const checkSchema = closedObject({
  ok: { type: 'boolean' },
  status: { type: ['integer', 'null'], description: 'The provider\'s HTTP status; null when no answer came.' },
  latency_ms: { type: 'integer' },
  models: { type: 'array', items: { type: 'string' }, description: 'Some of the models the provider lists.' },
  error: { type: ['string', 'null'], description: 'The provider\'s error message, or why no answer came.' },
});

export const testProvider = defineOperation<{ name: string }>({
  operationId: 'testProvider',
  method: 'post',
  path: '/v1/providers/{name}/test',
  tag: TAG,
  summary: 'Make one real, free call with the connection (its models list) and report what the provider answered',
  description:
    'A provider that refuses (a wrong key: 401) is a 200 with `ok: false`, its status and its error message; the key and header values are never part of the answer. ' +
    'Management keys only, as it makes an outbound request on demand; at most 1 MiB of the answer is read.',
  access: 'management', // it makes outbound requests on demand
  params: nameParams,
  errors: ['not_found'],
  responses: { 200: { description: 'What the provider answered', schema: checkSchema } },
  handler: async ({ params, caller, tenant }) => {
    const row = await tenant((tx) => providerOr404(tx, caller.tenantId, params.name));
    let connection;
    try {
      connection = await openProviderConnection(row);
    } catch (err) {
      if (err instanceof ModelConfigurationError) throw new ApiError('unavailable', err.message);
      throw err;
    }
    return { status: 200, body: await checkProviderConnection(connection) };
  },
});

async function providerOr404(...[tx, tenantId, name]: Parameters<typeof findProviderConnection>): Promise<ProviderConnectionRow> {
  return orNotFound(await findProviderConnection(tx, tenantId, name), 'provider', name);
}

/** The schema's pattern lets through a few strings that are still no URL (`http://[`), and port 0, which parses but reaches nothing. */
function checkBaseUrl(value: string): void {
  if (!URL.canParse(value)) throw invalidRequest('invalid provider: body.base_url is not a URL', [{ field: 'body.base_url', message: 'is not a URL' }]);
  if (new URL(value).port === '0') throw invalidRequest('invalid provider: body.base_url must not use port 0', [{ field: 'body.base_url', message: 'must not use port 0' }]);
}

/**
 * Stored secrets go only where they went when they were given: a PATCH that changes the kind (another
 * auth scheme) or the base URL's origin must give the key and headers again (or null), else a key
 * that may change the address but never read the key could send it to a server of its own.
 */
function requireSecretsOnNewDestination(current: ProviderConnectionRow, kind: ProviderKind, baseURL: string, body: ProviderChanges): void {
  const moved = kind !== current.kind || new URL(baseURL).origin !== new URL(current.base_url).origin;
  if (!moved) return;
  const fields: FieldError[] = [];
  const what = kind !== current.kind ? 'kind' : 'base_url origin';
  if (current.api_key !== null && body.api_key === undefined) fields.push({ field: 'body.api_key', message: `is required when the ${what} changes (the stored key is not sent to a new destination)` });
  if (current.headers !== null && body.headers === undefined) fields.push({ field: 'body.headers', message: `are required when the ${what} changes (the stored headers are not sent to a new destination)` });
  if (fields.length > 0) throw invalidRequest(`invalid provider: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
}

/**
 * What is stored for a connection: given secrets sealed (undefined: keep `current`'s sealed ones), names
 * and last four characters in the clear. OpenAI and Anthropic connections need a key.
 */
async function storedConnection(
  tenantId: string,
  id: string,
  kind: ProviderKind,
  baseURL: string,
  secrets: { apiKey: string | null | undefined; headers: Record<string, string> | undefined },
  prices: Record<string, ProviderModelPrice>,
  current?: ProviderConnectionRow,
): Promise<StoredProviderConnection> {
  const keepsKey = secrets.apiKey === undefined && current?.api_key != null;
  if ((kind === 'openai' || kind === 'anthropic') && !keepsKey && !secrets.apiKey) {
    const fields: FieldError[] = [{ field: 'body.api_key', message: `is required for kind '${kind}'` }];
    throw invalidRequest(`invalid provider: body.api_key is required for kind '${kind}'`, fields);
  }
  return sealingOr503('an api_key or headers', async () => {
    const apiKey = secrets.apiKey === undefined ? (current?.api_key ?? null) : secrets.apiKey === null ? null : await sealSecret(secrets.apiKey, secretContext(tenantId, id, 'api_key'));
    const last4 = secrets.apiKey === undefined ? (current?.api_key_last4 ?? null) : secrets.apiKey !== null && secrets.apiKey.length >= MIN_KEY_CHARS_FOR_LAST4 ? secrets.apiKey.slice(-4) : null;
    const headerNames = secrets.headers === undefined ? (current?.header_names ?? []) : Object.keys(secrets.headers);
    const sealedHeaders =
      secrets.headers === undefined ? (current?.headers ?? null) : headerNames.length === 0 ? null : await sealSecret(JSON.stringify(secrets.headers), secretContext(tenantId, id, 'headers'));
    return { kind, base_url: baseURL, api_key: apiKey, api_key_last4: last4, headers: sealedHeaders, header_names: headerNames, prices };
  });
}

export default [listProviders, createProvider, getProvider, updateProvider, deleteProvider, testProvider];
