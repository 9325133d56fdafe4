import type { JsonSchema } from './operation.js';

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

export const deletionResult: JsonSchema = {
  type: 'object',
  required: ['deleted', 'id'],
  additionalProperties: false,
  properties: { deleted: { type: 'boolean' }, id: { type: 'string' } },
};

/** `{"<plural>": [...], "next_cursor": ...}`: the shape of every list. */
export function listOf(plural: string, item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: [plural, 'next_cursor'],
    additionalProperties: false,
    properties: { [plural]: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'] } },
  };
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

export const refParams: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
};
