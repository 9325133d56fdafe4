import { ERROR_STATUS, type ErrorCode } from './errors.js';
import { bodyIsOptional, type AnyOperation, type JsonSchema } from './operation.js';
import { errorBody } from './schemas.js';
import { NUL_FREE_JSON_NAME, nulFree, nulFreeJson } from './nul-free-schema.js';

const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: 'Invalid or missing fields; `error.fields` lists them.',
  unauthorized: 'Missing, malformed, unknown or revoked credential.',
  forbidden: "The credential may not call this operation: management keys only, or a deployment's publishable key outside what it may do (docs/deployments.md).",
  not_found: 'The addressed resource does not exist in this workspace.',
  method_not_allowed: 'The path does not have this method; `Allow` lists those it has.',
  conflict: 'The request conflicts with the current state.',
  payload_too_large: 'The body is larger than the limit.',
  unsupported_media_type: 'The body is not JSON.',
  rate_limited: 'Too many requests; retry after `Retry-After` seconds.',
  internal: 'An unexpected error.',
  upstream_error: 'A dependency (model provider, embedder) failed.',
  unavailable: 'A dependency (the database, Temporal) is unreachable; retry after `Retry-After` seconds when it is given.',
};

/** The OpenAPI 3.1 document, generated from the same declarations the router serves. */
export function buildOpenApiDocument(operations: AnyOperation[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    (paths[operation.path] ??= {})[operation.method] = describeOperation(operation);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Platform API',
      version: '1.0.0',
      description: 'A tenant-scoped REST API for building, running and observing AI agents.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    tags: [...new Set(operations.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "An API key (`svc_sk_…`), an OAuth access token (`svc_at_…`), or a deployment's publishable key (`svc_pk_…`), which only runs its deployment's agent (docs/deployments.md).",
        },
      },
      schemas: { Error: errorBody, [NUL_FREE_JSON_NAME]: nulFreeJson },
    },
  };
}

function describeOperation(operation: AnyOperation): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(operation.responses)) {
    responses[status] = {
      description: spec.description,
      ...(spec.schema && { content: { [spec.contentType ?? 'application/json']: { schema: spec.schema } } }),
    };
  }
  for (const code of errorCodes(operation)) {
    responses[String(ERROR_STATUS[code])] ??= {
      description: ERROR_DESCRIPTIONS[code],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description && { description: operation.description }),
    ...(operation.access === 'public' && { security: [] }),
    parameters: [...parameters(operation.params, 'path'), ...parameters(operation.query, 'query')],
    ...(operation.body && {
      requestBody: { required: !bodyIsOptional(operation.body), content: { 'application/json': { schema: nulFree(operation.body) } } },
    }),
    ...(operation.requestBody && { requestBody: operation.requestBody }),
    responses,
  };
}

/** The errors an operation can answer: its own, plus those its declaration implies. */
export function errorCodes(operation: AnyOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>(operation.errors ?? []);
  if (operation.access !== 'public') codes.add('unauthorized');
  // Management operations refuse other keys; every operation refuses a publishable key out of its place.
  if (operation.access !== 'public') codes.add('forbidden');
  // Every request's path and query are validated (unknown parameters, NUL characters), so any may be a 400.
  codes.add('invalid_request');
  if (operation.body || operation.requestBody) codes.add('payload_too_large').add('unsupported_media_type');
  codes.add('internal');
  // Authenticating reads the database: while it is unreachable that is a 503 (api/middleware/errors.ts).
  // The public operations do not touch it, but for /readyz, which says so with its own 503.
  if (operation.access !== 'public') codes.add('unavailable');
  return [...codes].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
}

function parameters(schema: JsonSchema | undefined, location: 'path' | 'query'): unknown[] {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    ...(property.description ? { description: property.description } : {}),
    schema: nulFree(property),
  }));
}
