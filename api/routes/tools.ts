import { BUILTIN_KEYS } from '../../activities/tools/builtins/registry.js';
import { agentToolConfigSchema, browserToolConfigSchema, httpToolConfigProblems, httpToolConfigSchema, mcpToolConfigProblems, mcpToolConfigSchema } from '../../activities/tools/config-schemas.js';
import type { HttpToolConfig, McpToolConfig } from '../../activities/tools/types.js';
import { findAgent } from '../../db/agents.js';
import { findBrowserSignIn } from '../../db/browser-sign-ins.js';
import type { AgentToolConfig, BrowserToolConfig, Tool, ToolKind } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { findTool, findToolByName, insertToolIfNew, listToolsPage, updateToolById, type ToolDefinition } from '../../db/tools.js';
import { invalidRequest, orNotFound, type FieldError } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, pathParams, timestamp, upsertResultOf } from '../schemas.js';

const TAG = 'Tools';
const TOOL_KINDS: ToolKind[] = ['builtin', 'http', 'mcp', 'agent', 'browser'];
const toolName: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'What the model calls it; unique in the workspace.' };
/** The tool `ref` names (id, else name), or 404. */
const toolOr404 = refOr404(findTool, 'tool');

/** Each kind takes its own settings (`builtin`, `http` or `mcp`, named as the kind) and no other kind's. */
const settingsByKind: JsonSchema[] = TOOL_KINDS.map((kind) => ({
  if: { properties: { kind: { const: kind } }, required: ['kind'] },
  then: { required: [kind], properties: Object.fromEntries(TOOL_KINDS.map((other) => [other, other === kind])) },
}));
/** A PATCH that names a kind may carry that kind's settings (or keep the tool's) but no other kind's. */
const changedSettingsByKind: JsonSchema[] = TOOL_KINDS.map((kind) => ({
  if: { properties: { kind: { const: kind } }, required: ['kind'] },
  then: { properties: Object.fromEntries(TOOL_KINDS.filter((other) => other !== kind).map((other) => [other, false])) },
}));
/** Header values are write-only: they often carry credentials. */
const REDACTED = '[redacted]';

const toolSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  kind: { enum: TOOL_KINDS },
  description: { type: ['string', 'null'] },
  builtin: { type: ['string', 'null'] },
  http: { anyOf: [{ type: 'null' }, { type: 'object' }] },
  mcp: { anyOf: [{ type: 'null' }, { type: 'object' }] },
  agent: { anyOf: [{ type: 'null' }, agentToolConfigSchema] },
  browser: { anyOf: [{ type: 'null' }, browserToolConfigSchema] },
  created_at: timestamp,
  updated_at: timestamp,
});

interface ToolBody {
  name: string;
  kind: ToolKind;
  description?: string;
  builtin?: string;
  http?: HttpToolConfig;
  mcp?: Record<string, unknown>;
  agent?: AgentToolConfig;
  browser?: BrowserToolConfig;
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
  summary: 'Create a tool, or return the existing tool with this name unchanged',
  description:
    '`builtin` tools name a built-in key; `http` tools call a URL template (requests to loopback, private, link-local and ' +
    'metadata addresses are refused unless the operator allow-lists them with TOOL_HTTP_ALLOW_HOSTS); `mcp` tools call a ' +
    'tool of an MCP server over Streamable HTTP; `agent` tools run another agent of the workspace as a subagent (a child ' +
    'run, docs/subagents.md); `browser` tools open the URL the model gives in headless Chromium and answer the page as Markdown, ' +
    'with a saved sign-in for its origin when `browser.sign_in` names one (docs/browser.md). Header values are write-only and read back as "[redacted]". ' +
    'A name that exists answers 200 with that tool as it is (the spec\'s upsert by name); change a tool with PATCH /v1/tools/{id}.',
  access: 'key',
  body: {
    ...closedObject(
      {
        name: toolName,
        kind: { enum: TOOL_KINDS },
        description: { type: 'string', maxLength: 4000, description: 'What the model is told the tool does.' },
        builtin: { enum: BUILTIN_KEYS, description: 'Required with, and only with, kind `builtin`.' },
        http: { ...httpToolConfigSchema, description: 'Required with, and only with, kind `http`.' },
        mcp: { ...mcpToolConfigSchema, description: 'Required with, and only with, kind `mcp`.' },
        agent: { ...agentToolConfigSchema, description: 'Required with, and only with, kind `agent`: the agent (id or name) and an optional pinned version.' },
        browser: { ...browserToolConfigSchema, description: 'Required with, and only with, kind `browser` (`{}` for the defaults).' },
      },
      { required: ['name', 'kind'] },
    ),
    allOf: settingsByKind,
  },
  responses: {
    201: { description: 'Created', schema: upsertResultOf('tool', toolSchema) },
    200: { description: 'A tool with this name existed; it is returned unchanged', schema: upsertResultOf('tool', toolSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    checkConnectionSettings(body);
    const definition = {
      kind: body.kind,
      description: body.description ?? null,
      builtin: body.builtin ?? null,
      http: body.http ?? null,
      mcp: body.mcp ?? null,
      agent: body.agent ?? null,
      browser: body.browser ?? null,
    };
    const { tool, created } = await tenant(async (tx) => {
      // A name that exists answers that tool unchanged, whatever the body says.
      if (!(await findToolByName(tx, caller.tenantId, body.name))) {
        definition.agent = (await subagentById(tx, caller.tenantId, body.agent)) ?? null;
        definition.browser = (await signInById(tx, caller.tenantId, body.browser)) ?? null;
      }
      const inserted = await insertToolIfNew(tx, caller.tenantId, body.name, definition);
      const tool = inserted ?? orNotFound(await findToolByName(tx, caller.tenantId, body.name), 'tool', body.name);
      return { tool, created: Boolean(inserted) };
    });
    return { status: created ? 201 : 200, body: { tool: toolJson(tool), created } };
  },
});

type ToolChanges = Partial<Omit<ToolBody, 'description'>> & { description?: string | null };

export const updateTool = defineOperation<{ id: string }, unknown, ToolChanges>({
  operationId: 'updateTool',
  method: 'patch',
  path: '/v1/tools/{id}',
  tag: TAG,
  summary: 'Rename a tool or change its definition',
  description:
    'Fields left out stay as they are; `http`, `mcp` or `agent` given replaces those settings whole (headers included: send them ' +
    'again, not the "[redacted]" read back). A new `kind` needs that kind\'s settings and drops the old kind\'s. ' +
    '`{id}` is the tool\'s id or name. Graphs refer to tools by id, so they follow a rename.',
  access: 'key',
  params: pathParams(['id']),
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: toolName,
      kind: { enum: TOOL_KINDS },
      description: { type: ['string', 'null'], maxLength: 4000 },
      builtin: { enum: BUILTIN_KEYS },
      http: httpToolConfigSchema,
      mcp: mcpToolConfigSchema,
      agent: agentToolConfigSchema,
      browser: browserToolConfigSchema,
    },
    allOf: changedSettingsByKind,
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The tool as changed', schema: closedObject({ tool: toolSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    checkConnectionSettings(body);
    const tool = await conflictIfNameTaken(`a tool named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const current = await toolOr404(tx, caller.tenantId, params.id);
        body.agent = await subagentById(tx, caller.tenantId, body.agent);
        body.browser = await signInById(tx, caller.tenantId, body.browser);
        return updateToolById(tx, caller.tenantId, current.id, body.name ?? current.name, changedDefinition(current, body));
      }),
    );
    return { status: 200, body: { tool: toolJson(tool) } };
  },
});

/** The tool's definition with `changes` applied; a tool of one kind carries that kind's settings only. */
function changedDefinition(current: Tool, changes: ToolChanges): ToolDefinition {
  const kind = changes.kind ?? current.kind;
  const given: Record<ToolKind, unknown> = { builtin: changes.builtin, http: changes.http, mcp: changes.mcp, agent: changes.agent, browser: changes.browser };
  const fields: FieldError[] = [];
  for (const other of TOOL_KINDS) {
    if (other !== kind && given[other] !== undefined) fields.push({ field: `body.${other}`, message: `is not allowed for kind '${kind}'` });
  }
  // Settings kept from before only fit when the kind stays the same.
  const settings = given[kind] ?? (kind === current.kind ? current[kind] : null);
  if (settings === null || settings === undefined) fields.push({ field: `body.${kind}`, message: `is required to change the kind to '${kind}'` });
  if (fields.length) throw invalidRequest(`invalid tool: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
  return {
    kind,
    description: changes.description !== undefined ? changes.description : current.description,
    builtin: kind === 'builtin' ? (settings as string) : null,
    http: kind === 'http' ? (settings as object) : null,
    mcp: kind === 'mcp' ? (settings as object) : null,
    agent: kind === 'agent' ? (settings as AgentToolConfig) : null,
    browser: kind === 'browser' ? (settings as BrowserToolConfig) : null,
  };
}

/**
 * A subagent tool must name an agent of the workspace when it is saved (a typo is caught here, not at the
 * first call), and keeps that agent's id: a rename does not break it, and another agent given the old
 * name later does not take its place. A deleted agent is a tool error the model sees.
 */
async function subagentById<C extends AgentToolConfig | undefined>(tx: TenantTx, tenantId: string, config: C): Promise<C> {
  if (!config) return config;
  const agent = await findAgent(tx, tenantId, config.agent);
  if (!agent) {
    throw invalidRequest(`invalid tool: body.agent.agent names no agent of this workspace ('${config.agent}')`, [
      { field: 'body.agent.agent', message: `names no agent of this workspace` },
    ]);
  }
  return { ...config, agent: agent.id };
}

/** A browser tool's sign-in, like a subagent's agent, is checked when the tool is saved and kept by id. */
async function signInById<C extends BrowserToolConfig | undefined>(tx: TenantTx, tenantId: string, config: C): Promise<C> {
  if (!config?.sign_in) return config;
  const signIn = await findBrowserSignIn(tx, tenantId, config.sign_in);
  if (!signIn) {
    throw invalidRequest(`invalid tool: body.browser.sign_in names no saved sign-in of this workspace ('${config.sign_in}')`, [
      { field: 'body.browser.sign_in', message: 'names no saved sign-in of this workspace' },
    ]);
  }
  return { ...config, sign_in: signIn.id };
}

/** What the body schema cannot say about an http or mcp tool's settings. */
function checkConnectionSettings(body: Pick<ToolBody, 'http' | 'mcp'>): void {
  const fields: FieldError[] = [];
  if (body.http) {
    for (const problem of httpToolConfigProblems(body.http)) fields.push({ field: 'body.http', message: problem });
  }
  if (body.mcp) {
    for (const problem of mcpToolConfigProblems(body.mcp as unknown as McpToolConfig)) fields.push({ field: 'body.mcp.server_url', message: problem });
  }
  if (fields.length) throw invalidRequest(`invalid tool: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
}

function toolJson(tool: Tool) {
  return {
    ...pick(tool, ['id', 'name', 'kind', 'description', 'builtin']),
    http: redactHeaders(tool.http),
    mcp: redactHeaders(tool.mcp),
    agent: tool.agent ?? null,
    browser: tool.browser ?? null,
    ...timestampsJson(tool),
  };
}

function redactHeaders(config: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!config?.headers) return config;
  const headers = Object.fromEntries(Object.keys(config.headers as object).map((name) => [name, REDACTED]));
  return { ...config, headers };
}

export default [listTools, upsertTool, updateTool];
