import type { JsonSchema } from './operation.js';

export { MAX_REQUEST_INTEGER } from '../activities/json-schema/types.js';

/** Schemas shared by several operations. Each operation's own schemas live beside its handler. */

export const errorBody: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        fields: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'message'],
            properties: { field: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
};

export const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
export const nullableTimestamp: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

/**
 * A resource's name: unique in its scope and usable in paths in place of the id, so no `/` and no
 * control characters. `extra` adds to it (a description, a name a concrete path takes).
 */
export function nameSchema(extra: JsonSchema = {}): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^/\\u0000-\\u001f]+$', ...extra };
}

/**
 * An object with these properties and no others. All are required, as in the records and envelopes
 * (`{"agent": {...}}`) the API answers, unless `required` lists the ones that are (request bodies) or
 * `optional` those that are not.
 */
export function closedObject(properties: Record<string, JsonSchema>, which: { required?: string[]; optional?: string[] } = {}): JsonSchema {
  return {
    type: 'object',
    required: which.required ?? Object.keys(properties).filter((name) => !which.optional?.includes(name)),
    additionalProperties: false,
    properties,
  };
}

/** `{"<name>": {...}, "created": bool}`: what a create-or-return (or create-or-update) POST answers. */
export function upsertResultOf(name: string, schema: JsonSchema): JsonSchema {
  return closedObject({ [name]: schema, created: { type: 'boolean' } });
}

export const deletionResult: JsonSchema = closedObject({ deleted: { type: 'boolean' }, id: { type: 'string' } });

/** `{"<plural>": [...], "next_cursor": ...}`: the shape of every list. */
export function listOf(plural: string, item: JsonSchema): JsonSchema {
  return closedObject({ [plural]: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'] } });
}

/** `limit` and `cursor` for list operations. */
export const pageQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', minLength: 1 },
  },
};

/** Path parameters, each a non-empty string (of at most `maxLength` characters when given). */
export function pathParams(names: string[], maxLength?: number): JsonSchema {
  const value = (): JsonSchema => (maxLength === undefined ? { type: 'string', minLength: 1 } : { type: 'string', minLength: 1, maxLength });
  return { type: 'object', required: names, properties: Object.fromEntries(names.map((name) => [name, value()])) };
}

/** `{id}`: a resource's id, or for those that have one, its name. */
export const refParams: JsonSchema = pathParams(['id'], 200);

/**
 * One Server-Sent Events frame (api/sse.ts). OpenAPI 3.1 has no `itemSchema`, so a `text/event-stream`
 * response's `schema` describes each event as a client parses it, which is how tools read it.
 */
export const serverSentEvent: JsonSchema = {
  type: 'object',
  required: ['id', 'event', 'data'],
  properties: {
    id: { type: 'string', pattern: '^[0-9]+$', description: "The event's sequence number (`seq`)." },
    event: { type: 'string', minLength: 1, description: "The event's type." },
    data: { type: 'string', contentMediaType: 'application/json', description: 'The event as JSON, with `seq`, `type` and `created_at`.' },
  },
};
