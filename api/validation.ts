import { Ajv2020, type ErrorObject, type FormatDefinition, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { serviceRegExp } from '../activities/regex/ajv-linear-regexp.js';
import { invalidRequest, type FieldError } from './errors.js';
import { unstorableTextFields } from './unstorable-text.js';
import type { JsonSchema } from './operation.js';

// Bodies are checked as sent; query strings and path parameters arrive as text, so that ajv coerces
// them to the declared types (and fills defaults) before the handler sees them.
// Patterns run in linear time (activities/regex/ajv-linear-regexp.ts has why).
const strictAjv = withApiFormats(new Ajv2020({ allErrors: true, strict: true, useDefaults: true, code: { regExp: serviceRegExp } }));
const coercingAjv = withApiFormats(new Ajv2020({ allErrors: true, strict: true, useDefaults: true, coerceTypes: true, code: { regExp: serviceRegExp } }));

function withApiFormats(ajv: Ajv2020): Ajv2020 {
  addFormats.default(ajv);
  // RFC 3339 allows a leap second (23:59:60); JavaScript's Date cannot hold one, and an Invalid Date
  // would reach the database. A time must be both.
  const rfc3339 = (fullFormats['date-time'] as FormatDefinition<string>).validate as (text: string) => boolean;
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => rfc3339(text) && !Number.isNaN(Date.parse(text)) });
  return ajv;
}

export type Part = 'body' | 'query' | 'params';

/**
 * Compiles a validator for one part of a request; it throws a 400 listing every failing field. Strings
 * Postgres cannot store (U+0000, a lone surrogate) are refused first, whatever the schema (api/unstorable-text.ts).
 */
export function requestValidator(part: Part, schema: JsonSchema): (value: unknown) => void {
  const validate = (part === 'body' ? strictAjv : coercingAjv).compile(schema);
  return (value) => {
    const unstorable = unstorableTextFields(part, value);
    if (unstorable.length > 0) throw invalidRequest(`invalid ${part}: ${unstorable.map((f) => `${f.field} ${f.message}`).join('; ')}`, unstorable);
    if (!validate(value)) {
      const fields = fieldErrors(part, validate);
      const unknown = fields.filter((f) => f.message === 'unknown field').map((f) => f.field);
      const message = unknown.length
        ? `unknown ${unknown.length === 1 ? 'field' : 'fields'}: ${unknown.join(', ')}`
        : `invalid ${part}: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`;
      throw invalidRequest(message, fields);
    }
    // ajv coerces "Infinity", "-Infinity" and "1e400" to numbers that pass `type`, `minimum` and
    // `maximum` alike; no declared number of a query or path is meant to be infinite.
    const infinite = part === 'body' ? [] : infiniteNumberFields(part, value);
    if (infinite.length > 0) throw invalidRequest(`invalid ${part}: ${infinite.map((f) => `${f.field} ${f.message}`).join('; ')}`, infinite);
  };
}

function infiniteNumberFields(part: Part, value: unknown): FieldError[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value)
    .filter(([, v]) => typeof v === 'number' && !Number.isFinite(v))
    .map(([name]) => ({ field: `${part}.${name}`, message: 'must be a finite number' }));
}

function fieldErrors(part: Part, validate: ValidateFunction): FieldError[] {
  // An `if`/`then` (a kind-dependent requirement) reports the failing field itself, and then that
  // `then` failed: only the first says which field is wrong.
  const errors = (validate.errors ?? []).filter((error) => error.keyword !== 'if');
  return errors.map((error) => ({ field: fieldName(part, error), message: describe(error) }));
}

function fieldName(part: Part, error: ErrorObject): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  return [part, ...segments].join('.');
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'additionalProperties':
      return 'unknown field';
    case 'required':
      return 'is required';
    case 'false schema':
      return 'is not allowed here';
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}
