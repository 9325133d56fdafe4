import { GUARDRAIL_KINDS, guardrailConfigProblems, guardrailConfigSchemas, type GuardrailKind } from '../../activities/guardrails/index.js';
import { deleteGuardrailById, findGuardrail, listGuardrailsPage, saveGuardrail, setGuardrailEnabledById } from '../../db/guardrails.js';
import type { GuardrailRow } from '../../db/schema.js';
import { invalidRequest, orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { deletionResult, timestamp } from '../schemas.js';
import { requestValidator } from '../validation.js';

const TAG = 'Guardrails';
const nameParams: JsonSchema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } };

const guardrailSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'kind', 'target', 'action', 'enabled', 'description', 'config', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    kind: { enum: GUARDRAIL_KINDS },
    target: { enum: ['input', 'output', 'both'] },
    action: { enum: ['block', 'redact', 'warn'] },
    enabled: { type: 'boolean' },
    description: { type: ['string', 'null'] },
    config: { type: 'object' },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

interface GuardrailBody {
  name: string;
  kind: GuardrailKind;
  target: 'input' | 'output' | 'both';
  action: 'block' | 'redact' | 'warn';
  enabled: boolean;
  description?: string;
  config: Record<string, unknown>;
}

/** Each kind's config is checked against its own schema, so a 400 names the config field that is wrong. */
const configValidators = Object.fromEntries(
  GUARDRAIL_KINDS.map((kind) => [kind, requestValidator('body', { type: 'object', properties: { config: guardrailConfigSchemas[kind] } })]),
) as Record<GuardrailKind, (value: unknown) => void>;

function guardrailJson(row: GuardrailRow) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    target: row.target,
    action: row.action,
    enabled: row.enabled,
    description: row.description,
    config: row.config,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const listGuardrails = defineListOperation({
  operationId: 'listGuardrails',
  path: '/v1/guardrails',
  tag: TAG,
  summary: 'Guardrails, oldest first',
  plural: 'guardrails',
  pageDescription: 'A page of guardrails',
  itemSchema: guardrailSchema,
  page: listGuardrailsPage,
  toJson: guardrailJson,
});

export const upsertGuardrail = defineOperation<Record<string, never>, unknown, GuardrailBody>({
  operationId: 'upsertGuardrail',
  method: 'post',
  path: '/v1/guardrails',
  tag: TAG,
  summary: 'Create a guardrail, or replace the one with this name',
  description: 'Runs enforce every enabled guardrail of the workspace, or only those an agent graph lists in `guardrails`. See docs/prompts-and-guardrails.md for each kind\'s config.',
  access: 'key',
  body: {
    type: 'object',
    required: ['name', 'kind'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^/\\u0000-\\u001f]+$' },
      kind: { enum: GUARDRAIL_KINDS },
      target: { enum: ['input', 'output', 'both'], default: 'both' },
      action: { enum: ['block', 'redact', 'warn'], default: 'block' },
      enabled: { type: 'boolean', default: true },
      description: { type: 'string', maxLength: 10_000 },
      config: { type: 'object', default: {}, description: 'Per kind: see docs/prompts-and-guardrails.md.' },
    },
  },
  responses: {
    201: { description: 'Created', schema: upsertResult() },
    200: { description: 'A guardrail with this name existed; it is replaced', schema: upsertResult() },
  },
  handler: async ({ body, caller, tenant }) => {
    configValidators[body.kind]({ config: body.config });
    const problems = guardrailConfigProblems(body.kind, body.config);
    if (problems.length) {
      const fields = problems.map((p) => ({ field: `body.${p.field}`, message: p.message }));
      throw invalidRequest(`invalid ${body.kind} config: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
    }
    const definition = {
      kind: body.kind,
      target: body.target,
      action: body.action,
      enabled: body.enabled,
      description: body.description ?? null,
      config: body.config,
    };
    const { row, created } = await tenant((tx) => saveGuardrail(tx, caller.tenantId, body.name, definition));
    return { status: created ? 201 : 200, body: { guardrail: guardrailJson(row), created } };
  },
});

function upsertResult(): JsonSchema {
  return { type: 'object', required: ['guardrail', 'created'], additionalProperties: false, properties: { guardrail: guardrailSchema, created: { type: 'boolean' } } };
}

export const setGuardrailEnabled = defineOperation<{ name: string }, unknown, { enabled: boolean }>({
  operationId: 'setGuardrailEnabled',
  method: 'patch',
  path: '/v1/guardrails/{name}',
  tag: TAG,
  summary: 'Enable or disable a guardrail',
  access: 'key',
  params: nameParams,
  body: { type: 'object', required: ['enabled'], additionalProperties: false, properties: { enabled: { type: 'boolean' } } },
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The guardrail’s state',
      schema: { type: 'object', required: ['name', 'enabled'], additionalProperties: false, properties: { name: { type: 'string' }, enabled: { type: 'boolean' } } },
    },
  },
  handler: async ({ params, body, caller, tenant }) => {
    const row = await tenant(async (tx) => {
      const found = orNotFound(await findGuardrail(tx, caller.tenantId, params.name), 'guardrail', params.name);
      return setGuardrailEnabledById(tx, caller.tenantId, found.id, body.enabled);
    });
    return { status: 200, body: { name: row.name, enabled: row.enabled } };
  },
});

export const deleteGuardrail = defineOperation<{ name: string }>({
  operationId: 'deleteGuardrail',
  method: 'delete',
  path: '/v1/guardrails/{name}',
  tag: TAG,
  summary: 'Delete a guardrail',
  access: 'key',
  params: nameParams,
  errors: ['not_found'],
  responses: { 200: { description: 'Deleted', schema: deletionResult } },
  handler: async ({ params, caller, tenant }) => {
    const id = await tenant(async (tx) => {
      const found = orNotFound(await findGuardrail(tx, caller.tenantId, params.name), 'guardrail', params.name);
      await deleteGuardrailById(tx, caller.tenantId, found.id);
      return found.id;
    });
    return { status: 200, body: { deleted: true, id } };
  },
});

export default [listGuardrails, upsertGuardrail, setGuardrailEnabled, deleteGuardrail];
