import { bodyIsOptional, type AnyOperation, type JsonSchema } from '../operation.js';

/**
 * The MCP tools of the API: one per authenticated operation, named by its operationId, built from the
 * same declarations the router, the validation and the OpenAPI document come from.
 *
 * Arguments: every path parameter and query parameter is a top-level argument under its own name, and
 * the JSON request body, when the operation takes one, is the argument `body` (not flattened: a body
 * field may share its name with a path parameter, as `name` does in `PATCH /v1/prompts/{name}`).
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[]; additionalProperties: false };
  outputSchema?: { type: 'object'; [keyword: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** How one tool reaches its operation. */
export interface ToolRoute {
  operationId: string;
  method: AnyOperation['method'];
  /** OpenAPI-style, e.g. `/v1/agents/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: boolean;
  /** The operation answers a Server-Sent Events stream, which the tool collects. */
  streams: boolean;
}

export interface McpToolSet {
  tools: McpTool[];
  routes: Map<string, ToolRoute>;
}

/** The argument that carries the JSON request body. */
export const BODY_ARGUMENT = 'body';

const EVENT_STREAM = 'text/event-stream';

/** What a streaming tool answers: the stream's events, collected until it ends (or the wait runs out). */
export const collectedStreamSchema = {
  type: 'object' as const,
  required: ['events', 'ended', 'last_seq', 'omitted_deltas'],
  properties: {
    run_id: { type: ['string', 'null'], description: 'The run the events belong to.' },
    events: {
      type: 'array',
      description: 'The run events in order (`seq`, `type`, `created_at` and the event data); `message.delta` events are left out.',
      items: { type: 'object' },
    },
    ended: {
      type: 'boolean',
      description: 'True when the stream ended (the run finished or paused); false when the wait ran out while the run went on.',
    },
    last_seq: { type: 'integer', description: 'The sequence number of the last event seen; resume with streamRunEvents `after`.' },
    omitted_deltas: { type: 'integer', description: 'How many `message.delta` events were left out (`message.completed` carries the whole text).' },
    note: { type: 'string' },
  },
};

/** The tools for `operations`: authenticated ones with a JSON body or none; SSE operations collect their stream. */
export function buildMcpTools(operations: AnyOperation[]): McpToolSet {
  const tools: McpTool[] = [];
  const routes = new Map<string, ToolRoute>();
  for (const operation of operations) {
    if (operation.access === 'public') continue;
    const body = jsonBodySchema(operation);
    if (body === null) continue; // a body that is not JSON (none exists today, but an upload-only operation would be one)
    if (routes.has(operation.operationId)) throw new Error(`duplicate operationId ${operation.operationId}`);

    const pathParams = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const paramSchemas = (operation.params?.properties ?? {}) as Record<string, JsonSchema>;
    const querySchemas = (operation.query?.properties ?? {}) as Record<string, JsonSchema>;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const add = (name: string, schema: JsonSchema, isRequired: boolean) => {
      if (name in properties) throw new Error(`${operation.operationId}: argument '${name}' is both a path/query parameter and another argument`);
      properties[name] = schema;
      if (isRequired) required.push(name);
    };
    for (const name of pathParams) add(name, { type: 'string', ...paramSchemas[name], description: describeParam(paramSchemas[name], 'path') }, true);
    const requiredQuery = new Set((operation.query?.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(querySchemas)) add(name, { ...schema, description: describeParam(schema, 'query') }, requiredQuery.has(name));
    // Optional where the REST body is (a body that asks for nothing may be left out: api/operation.ts).
    if (body) add(BODY_ARGUMENT, { ...body, description: body.description ?? `The JSON request body of ${operation.method.toUpperCase()} ${operation.path}.` }, !bodyIsOptional(operation.body));

    const streams = Object.values(operation.responses).some((response) => response.contentType?.startsWith(EVENT_STREAM));
    const title = operation.summary;
    tools.push({
      name: operation.operationId,
      title,
      description: describeOperation(operation, streams),
      inputSchema: { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false },
      ...outputSchemaOf(operation, streams),
      annotations: {
        title,
        readOnlyHint: operation.method === 'get',
        destructiveHint: operation.method === 'delete',
        idempotentHint: operation.method === 'get' || operation.method === 'put' || operation.method === 'delete',
        openWorldHint: false,
      },
    });
    routes.set(operation.operationId, {
      operationId: operation.operationId,
      method: operation.method,
      path: operation.path,
      pathParams,
      queryParams: Object.keys(querySchemas),
      hasBody: body !== undefined,
      streams,
    });
  }
  return { tools, routes };
}

/**
 * The JSON body schema: the operation's `body`, or the `application/json` variant of an operation that
 * reads its own body (addDocument: JSON `title` + `text`; its multipart upload has no MCP form).
 * undefined: no body; null: a body that cannot be JSON.
 */
function jsonBodySchema(operation: AnyOperation): JsonSchema | undefined | null {
  if (operation.body) return operation.body;
  if (!operation.requestBody) return undefined;
  const content = operation.requestBody.content as Record<string, { schema?: JsonSchema }> | undefined;
  return content?.['application/json']?.schema ?? null;
}

function describeParam(schema: JsonSchema | undefined, location: 'path' | 'query'): string {
  const own = typeof schema?.description === 'string' ? `${schema.description} ` : '';
  return `${own}(${location} parameter)`;
}

function describeOperation(operation: AnyOperation, streams: boolean): string {
  const parts = [operation.summary.endsWith('.') ? operation.summary : `${operation.summary}.`];
  if (operation.description) parts.push(operation.description);
  if (operation.requestBody && !operation.body) parts.push('Over MCP only the JSON form of the body is accepted.');
  if (streams) {
    parts.push(
      'Over MCP the event stream is collected until it ends (the run finishes or pauses for an answer) and answered as ' +
        '`events`; if it is still open after the wait, `ended` is false and the run goes on: follow it with getRun or ' +
        'streamRunEvents `after: last_seq`.',
    );
  }
  if (operation.access === 'management') parts.push('Management keys only: other credentials get a 403 error.');
  parts.push(`REST: ${operation.method.toUpperCase()} ${operation.path}.`);
  return parts.join(' ');
}

/**
 * The success responses' JSON schema as the tool's outputSchema (MCP wants an object at the root); two
 * different success schemas (an upsert's 201 and 200) become `anyOf`. No outputSchema when a success
 * response has no JSON schema.
 */
function outputSchemaOf(operation: AnyOperation, streams: boolean): Pick<McpTool, 'outputSchema'> {
  if (streams) return { outputSchema: collectedStreamSchema };
  const successes = Object.entries(operation.responses).filter(([status]) => Number(status) >= 200 && Number(status) < 300);
  const schemas: JsonSchema[] = [];
  for (const [, response] of successes) {
    const contentType = response.contentType ?? 'application/json';
    if (!response.schema || !contentType.includes('json') || response.schema.type !== 'object') return {};
    if (!schemas.some((known) => JSON.stringify(known) === JSON.stringify(response.schema))) schemas.push(response.schema);
  }
  if (schemas.length === 0) return {};
  if (schemas.length === 1) return { outputSchema: schemas[0] as McpTool['outputSchema'] };
  return { outputSchema: { type: 'object', anyOf: schemas } };
}
