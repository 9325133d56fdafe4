import { sql, type SelectQueryBuilder } from 'kysely';
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

export interface PageQuery {
  limit: number;
  cursor?: string;
}

/**
 * One page of a list in id order (ids sort by creation): the rows after `cursor`, and the cursor of the
 * next page, found by fetching one row more than asked for.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's select query
export async function fetchPage<O extends { id: string }>(query: SelectQueryBuilder<any, any, O>, idColumn: string, { limit, cursor }: PageQuery) {
  let q = query.orderBy(sql.ref(idColumn)).limit(limit + 1);
  if (cursor) q = q.where(sql.ref(idColumn), '>', cursor);
  return page(await q.execute(), limit);
}

/** Takes `limit + 1` rows and answers the page plus the cursor of the next one. */
export function page<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}

export const refParams: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
};
