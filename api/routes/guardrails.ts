import { GUARDRAIL_KINDS, guardrailConfigProblems, guardrailConfigSchemas, type GuardrailKind } from '../../activities/guardrails/index.js';
import { listProviderNames } from '../../db/provider-connections.js';
import { deleteGuardrailById, findGuardrail, listGuardrailsPage, saveGuardrail, setGuardrailEnabledById } from '../../db/guardrails.js';
import type { GuardrailRow } from '../../db/schema.js';
import { invalidRequest } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { defineListOperation } from '../list-operation.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, pathParams, timestamp, upsertResultOf } from '../schemas.js';

const TAG = 'Guardrails';
const nameParams = pathParams(['name']);
/** The guardrail `ref` names, or 404. */
const guardrailOr404 = refOr404(findGuardrail, 'guardrail');

const guardrailSchema = closedObject({
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
});

interface GuardrailBody {
  name: string;
  kind: GuardrailKind;
  target: 'input' | 'output' | 'both';
  action: 'block' | 'redact' | 'warn';
  enabled: boolean;
  description?: string;
  config: Record<string, unknown>;
}

/**
 * Each kind's `config` schema, applied when `kind` names it: the OpenAPI document states what the router
 * enforces, and a 400 names the config field that is wrong. A kind whose config has required fields
 * requires `config` too (the server's default `{}` would fail them).
 */
const configByKind: JsonSchema[] = GUARDRAIL_KINDS.map((kind) => {
  const config = guardrailConfigSchemas[kind];
  const needsConfig = ((config.required ?? []) as string[]).length > 0;
  return {
    if: { properties: { kind: { const: kind } }, required: ['kind'] },
    then: { ...(needsConfig && { required: ['config'] }), properties: { config } },
  };
});

function guardrailJson(row: GuardrailRow) {
  return { ...pick(row, ['id', 'name', 'kind', 'target', 'action', 'enabled', 'description', 'config']), ...timestampsJson(row) };
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
    ...closedObject(
      {
        name: nameSchema(),
        kind: { enum: GUARDRAIL_KINDS },
        target: { enum: ['input', 'output', 'both'], default: 'both' },
        action: { enum: ['block', 'redact', 'warn'], default: 'block' },
        enabled: { type: 'boolean', default: true },
        description: { type: 'string', maxLength: 10_000 },
        config: { type: 'object', default: {}, description: 'Per kind: its schema below (`allOf`), and see docs/prompts-and-guardrails.md.' },
      },
      { required: ['name', 'kind'] },
    ),
    allOf: configByKind,
  },
  responses: {
    201: { description: 'Created', schema: upsertResultOf('guardrail', guardrailSchema) },
    200: { description: 'A guardrail with this name existed; it is replaced', schema: upsertResultOf('guardrail', guardrailSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const workspaceProviders = body.kind === 'semantic' ? await tenant((tx) => listProviderNames(tx, caller.tenantId)) : undefined;
    const problems = guardrailConfigProblems(body.kind, body.config, { workspaceProviders });
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

export const setGuardrailEnabled = defineOperation<{ name: string }, unknown, { enabled: boolean }>({
  operationId: 'setGuardrailEnabled',
  method: 'patch',
  path: '/v1/guardrails/{name}',
  tag: TAG,
  summary: 'Enable or disable a guardrail',
  access: 'key',
  params: nameParams,
  body: closedObject({ enabled: { type: 'boolean' } }),
  errors: ['not_found'],
  responses: { 200: { description: 'The guardrail’s state', schema: closedObject({ name: { type: 'string' }, enabled: { type: 'boolean' } }) } },
  handler: async ({ params, body, caller, tenant }) => {
    const row = await tenant(async (tx) => {
      const found = await guardrailOr404(tx, caller.tenantId, params.name);
      return setGuardrailEnabledById(tx, caller.tenantId, found.id, body.enabled);
    });
    return { status: 200, body: { name: row.name, enabled: row.enabled } };
  },
});

export const deleteGuardrail = defineDeleteOperation<{ name: string }>({
  operationId: 'deleteGuardrail',
  path: '/v1/guardrails/{name}',
  tag: TAG,
  summary: 'Delete a guardrail',
  params: nameParams,
  find: (tx, tenantId, { name }) => guardrailOr404(tx, tenantId, name),
  deleteById: deleteGuardrailById,
});

export default [listGuardrails, upsertGuardrail, setGuardrailEnabled, deleteGuardrail];
