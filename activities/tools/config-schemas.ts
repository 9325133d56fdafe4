import { MAX_REQUEST_INTEGER, type JsonSchema } from '../json-schema/types.js';
import { argumentsSchemaProblem } from './arguments-validator.js';
import type { HttpToolConfig, McpToolConfig } from './types.js';
import { fillUrlTemplate, placeholderNames } from './url-template.js';

/**
 * JSON Schemas (2020-12, ajv strict-clean) for the `http` and `mcp` settings of a tool, for the API to
 * validate tool creation with. What a schema cannot say is checked by `httpToolConfigProblems`.
 */

const timeoutMs: JsonSchema = {
  type: 'integer',
  minimum: 1,
  maximum: 120000,
  description: 'How long a call may take, in milliseconds.',
};

const headers: JsonSchema = {
  type: 'object',
  description: 'Sent with every request; values may hold secrets and are never shown to the model.',
  maxProperties: 50,
  propertyNames: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", maxLength: 256 },
  additionalProperties: { type: 'string', maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' },
};

export const httpToolConfigSchema: JsonSchema = {
  type: 'object',
  required: ['method', 'url'],
  additionalProperties: false,
  properties: {
    method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
    url: {
      type: 'string',
      maxLength: 2048,
      pattern: '^https?://[^\\s/?#]+(?:[/?#][^\\s]*)?$',
      description:
        'An http(s) URL template: `{name}` is replaced by the URL-encoded argument `name`. With GET and DELETE the ' +
        'other arguments become query parameters; with POST, PUT and PATCH they are the JSON body.',
    },
    headers,
    arguments_schema: {
      type: 'object',
      required: ['type'],
      properties: { type: { const: 'object' } },
      description: 'JSON Schema (2020-12) of the arguments, an object; the model is shown it and every call is checked against it.',
    },
    timeout_ms: { ...timeoutMs, description: 'How long a call may take, in milliseconds; default 10 000.' },
  },
};

export const mcpToolConfigSchema: JsonSchema = {
  type: 'object',
  required: ['server_url', 'tool'],
  additionalProperties: false,
  properties: {
    server_url: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s/?#]+(?:[/?#][^\\s]*)?$', description: 'The MCP server (Streamable HTTP).' },
    tool: { type: 'string', minLength: 1, maxLength: 200, description: "The tool's name on that server." },
    headers,
    timeout_ms: { ...timeoutMs, description: 'How long a call may take, in milliseconds; default 30 000.' },
  },
};

/** What `httpToolConfigSchema` cannot check: the template makes a URL, its placeholders are arguments, the schema compiles. */
export function httpToolConfigProblems(config: HttpToolConfig): string[] {
  const problems: string[] = [];
  const placeholders = placeholderNames(config.url);
  try {
    fillUrlTemplate(config.url, Object.fromEntries(placeholders.map((name) => [name, 'x'])));
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  if (config.arguments_schema) {
    const problem = argumentsSchemaProblem(config.arguments_schema);
    if (problem) problems.push(problem);
    const properties = (config.arguments_schema.properties ?? {}) as Record<string, unknown>;
    for (const name of placeholders) {
      if (!Object.hasOwn(properties, name)) problems.push(`url placeholder {${name}} is not a property of arguments_schema`);
    }
  }
  return problems;
}

/** What `mcpToolConfigSchema` cannot check: the server URL parses as one (`http://ë[x` matches the pattern). */
export function mcpToolConfigProblems(config: McpToolConfig): string[] {
  return URL.canParse(config.server_url) ? [] : ['is not a valid URL'];
}

/** The highest `max_depth` a subagent tool may set: each level is a workflow waiting on the next. */
export const SUBAGENT_DEPTH_LIMIT = 10;
export const DEFAULT_SUBAGENT_MAX_DEPTH = 3;

export const agentToolConfigSchema: JsonSchema = {
  type: 'object',
  required: ['agent'],
  additionalProperties: false,
  properties: {
    agent: { type: 'string', minLength: 1, maxLength: 200, description: 'The agent to run: its id or name in this workspace; the tool keeps its id.' },
    version: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER, description: 'A pinned version of that agent; left out, the version published when the tool is called.' },
    max_depth: {
      type: 'integer',
      minimum: 1,
      maximum: SUBAGENT_DEPTH_LIMIT,
      description: `How many levels of subagents may run below the run a client started (default ${DEFAULT_SUBAGENT_MAX_DEPTH}); a call that would go deeper is a tool error.`,
    },
  },
};

export const DEFAULT_BROWSER_MAX_CHARS = 20_000;
export const DEFAULT_BROWSER_TIMEOUT_MS = 30_000;

export const browserToolConfigSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sign_in: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'A saved sign-in (its id or name; the tool keeps its id), loaded when the page is on its origin.',
    },
    max_chars: { type: 'integer', minimum: 100, maximum: 200_000, description: `At most this many characters of the page's Markdown; default ${DEFAULT_BROWSER_MAX_CHARS}.` },
    timeout_ms: { type: 'integer', minimum: 1000, maximum: 120_000, description: `For the whole call (starting the browser, loading, reading), in milliseconds; default ${DEFAULT_BROWSER_TIMEOUT_MS}.` },
  },
};

/** What the model is shown, and every call is checked against. */
export const browserToolArgumentsSchema: JsonSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: { url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The http(s) address of the page to open.' } },
};
