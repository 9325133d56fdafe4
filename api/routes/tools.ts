import { BUILTIN_KEYS } from '../../activities/tools/builtins/registry.js';
import { httpToolConfigProblems, httpToolConfigSchema, mcpToolConfigSchema } from '../../activities/tools/config-schemas.js';
import type { HttpToolConfig } from '../../activities/tools/types.js';
import type { Tool, ToolKind } from '../../db/schema.js';
import { listToolsPage, saveTool } from '../../db/tools.js';
import { invalidRequest, type FieldError } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { timestamp } from '../schemas.js';

const TAG = 'Tools';
/** Header values are write-only: they often carry credentials. */
const REDACTED = '[redacted]';

const toolSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'kind', 'description', 'builtin', 'http', 'mcp', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    kind: { enum: ['builtin', 'http', 'mcp'] },
    description: { type: ['string', 'null'] },
    builtin: { type: ['string', 'null'] },
    http: { anyOf: [{ type: 'null' }, { type: 'object' }] },
    mcp: { anyOf: [{ type: 'null' }, { type: 'object' }] },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

interface ToolBody {
  name: string;
  kind: ToolKind;
  description?: string;
  builtin?: string;
  http?: HttpToolConfig;
  mcp?: Record<string, unknown>;
}

export const listTools = defineListOperation({
  operationId: 'listTools',
  path: '/v1/tools',
  tag: TAG,
  summary: 'The tool catalog, oldest first',
  plural: 'tools',
  pageDescription: 'A page of tools',
  itemSchema: toolSchema,
  page: listToolsPage,
  toJson: toolJson,
});

export const upsertTool = defineOperation<Record<string, never>, unknown, ToolBody>({
  operationId: 'upsertTool',
  method: 'post',
  path: '/v1/tools',
  tag: TAG,
  summary: 'Create a tool, or replace the definition of the tool with this name',
  description:
    '`builtin` tools name a built-in key; `http` tools call a URL template (requests to loopback, private, link-local and ' +
    'metadata addresses are refused unless the operator allow-lists them with TOOL_HTTP_ALLOW_HOSTS); `mcp` tools call a ' +
    'tool of an MCP server over Streamable HTTP. Header values are write-only and read back as "[redacted]".',
  access: 'key',
  body: {
    type: 'object',
    required: ['name', 'kind'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'What the model calls it; unique in the workspace.' },
      kind: { enum: ['builtin', 'http', 'mcp'] },
      description: { type: 'string', maxLength: 4000, description: 'What the model is told the tool does.' },
      builtin: { enum: BUILTIN_KEYS },
      http: httpToolConfigSchema,
      mcp: mcpToolConfigSchema,
    },
  },
  responses: {
    201: { description: 'Created', schema: upsertResult() },
    200: { description: 'A tool with this name existed; its definition is replaced', schema: upsertResult() },
  },
  handler: async ({ body, caller, tenant }) => {
    checkKindFields(body);
    const definition = {
      kind: body.kind,
      description: body.description ?? null,
      builtin: body.builtin ?? null,
      http: body.http ?? null,
      mcp: body.mcp ?? null,
    };
    const { tool, created } = await tenant((tx) => saveTool(tx, caller.tenantId, body.name, definition));
    return { status: created ? 201 : 200, body: { tool: toolJson(tool), created } };
  },
});

function upsertResult(): JsonSchema {
  return { type: 'object', required: ['tool', 'created'], additionalProperties: false, properties: { tool: toolSchema, created: { type: 'boolean' } } };
}

/** Each kind takes its own settings and no other kind's. */
function checkKindFields(body: ToolBody): void {
  const fields: FieldError[] = [];
  const settings = { builtin: body.builtin, http: body.http, mcp: body.mcp };
  for (const [kind, value] of Object.entries(settings)) {
    if (kind === body.kind && value === undefined) fields.push({ field: `body.${kind}`, message: `is required for kind '${kind}'` });
    if (kind !== body.kind && value !== undefined) fields.push({ field: `body.${kind}`, message: `is not allowed for kind '${body.kind}'` });
  }
  if (body.http) {
    for (const problem of httpToolConfigProblems(body.http)) fields.push({ field: 'body.http', message: problem });
  }
  if (fields.length) throw invalidRequest(`invalid tool: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
}

function toolJson(tool: Tool) {
  return {
    id: tool.id,
    name: tool.name,
    kind: tool.kind,
    description: tool.description,
    builtin: tool.builtin,
    http: redactHeaders(tool.http),
    mcp: redactHeaders(tool.mcp),
    created_at: tool.created_at.toISOString(),
    updated_at: tool.updated_at.toISOString(),
  };
}

function redactHeaders(config: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!config?.headers) return config;
  const headers = Object.fromEntries(Object.keys(config.headers as object).map((name) => [name, REDACTED]));
  return { ...config, headers };
}

export default [listTools, upsertTool];
