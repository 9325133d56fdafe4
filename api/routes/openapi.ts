import { buildOpenApiDocument } from '../openapi.js';
import { defineOperation, type AnyOperation } from '../operation.js';

/** Serves the OpenAPI document of the given operations (itself included). */
export function openApiOperation(operations: () => AnyOperation[]) {
  return defineOperation({
    operationId: 'getOpenApiDocument',
    method: 'get',
    path: '/openapi.json',
    tag: 'Meta',
    summary: 'This API as an OpenAPI 3.1 document',
    access: 'public',
    responses: { 200: { description: 'The OpenAPI document', schema: { type: 'object', required: ['openapi'] } } },
    handler: async ({ deps }) => ({ status: 200, body: buildOpenApiDocument(operations(), deps.publicUrl) }),
  });
}
