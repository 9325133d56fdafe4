import type { JsonSchema } from './operation.js';

/** A string without U+0000, in ECMA-262 and Python syntax alike. */
export const NUL_FREE_PATTERN = '^[^\\u0000]*$';

/** Any JSON value whose strings and object keys hold no U+0000 (each keyword applies to its own type only). */
export const NUL_FREE_JSON_NAME = 'NulFreeJson';
const nulFreeJsonRef: JsonSchema = { $ref: `#/components/schemas/${NUL_FREE_JSON_NAME}` };
export const nulFreeJson: JsonSchema = {
  description: 'Any JSON value without the NUL character (U+0000) in its strings or object keys.',
  pattern: NUL_FREE_PATTERN,
  propertyNames: { pattern: NUL_FREE_PATTERN },
  items: nulFreeJsonRef,
  additionalProperties: nulFreeJsonRef,
};

type Schema = JsonSchema | boolean;

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMAS = ['items', 'additionalProperties', 'if', 'then', 'else', 'contains', 'unevaluatedProperties', 'unevaluatedItems'] as const;
const STRING_KEYWORDS = ['pattern', 'minLength', 'maxLength', 'format'];
const COMPOSITION = ['anyOf', 'oneOf', 'allOf', 'if', '$ref', 'not', 'enum', 'const'];

/**
 * A request schema as the OpenAPI document shows it: every request part is refused with a 400 when a
 * string or object key in it holds U+0000 (api/unstorable-text.ts), whatever its schema, so the document
 * says so of every string, every object key and every free-form value. The validators keep the
 * declared schemas: the NUL check runs before them and names the field.
 */
export function nulFree(schema: Schema): Schema {
  if (schema === false) return false;
  if (schema === true) return nulFreeJsonRef;
  const out: JsonSchema = { ...schema };
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key] as Record<string, Schema> | undefined;
    if (map) out[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, nulFree(sub)]));
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key] as Schema[] | undefined;
    if (list) out[key] = list.map(nulFree);
  }
  for (const key of SUBSCHEMAS) {
    const sub = schema[key] as Schema | undefined;
    if (sub !== undefined) out[key] = nulFree(sub);
  }
  if ('enum' in schema || 'const' in schema) return out;

  const types = schema.type === undefined ? undefined : ([] as unknown[]).concat(schema.type);
  const mayBe = (type: string) => types === undefined || types.includes(type);
  // A schema that only describes (no type, no composition) takes any JSON value.
  if (types === undefined && !COMPOSITION.some((key) => key in schema) && !SUBSCHEMA_MAPS.some((key) => key in schema)) {
    return { ...out, ...nulFreeJson };
  }
  // Without a type, only a schema with string keywords is taken for a string's (not an `if`, say).
  const mayBeString = types === undefined ? STRING_KEYWORDS.some((key) => key in schema) : types.includes('string');
  if (mayBeString) {
    if (typeof schema.pattern === 'string') out.allOf = [...((out.allOf as Schema[]) ?? []), { pattern: NUL_FREE_PATTERN }];
    else out.pattern = NUL_FREE_PATTERN;
  }
  if (mayBe('object') && types !== undefined) {
    const closed = schema.additionalProperties === false && schema.patternProperties === undefined;
    if (!closed) out.propertyNames = schema.propertyNames ? { allOf: [schema.propertyNames, { pattern: NUL_FREE_PATTERN }] } : { pattern: NUL_FREE_PATTERN };
    if (schema.additionalProperties === undefined) out.additionalProperties = nulFreeJsonRef;
  }
  if (mayBe('array') && types !== undefined && schema.items === undefined && schema.prefixItems === undefined) out.items = nulFreeJsonRef;
  return out;
}
