import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../json-schema/types.js';
import { schemaCache } from '../json-schema/cache.js';
import { linearRegExp, withinPatternBudget } from '../regex/ajv-linear-regexp.js';
import { ToolArgumentsError, ToolConfigError } from './errors.js';

/**
 * Checks a tool call's arguments against the tool's JSON Schema (2020-12) and returns a copy with the
 * schema's defaults filled in. A tool without a schema takes any arguments.
 */
export function validateArguments(schema: JsonSchema | undefined, args: Record<string, unknown>): Record<string, unknown> {
  if (!schema) return args;
  const validate = validatorFor(schema);
  const copy = structuredClone(args);
  if (!withinPatternBudget(() => validate(copy))) {
    const issues = (validate.errors ?? []).map(describe);
    throw new ToolArgumentsError(`invalid arguments: ${issues.join('; ')}`, issues);
  }
  return copy;
}

/** Why the schema cannot be used as an arguments schema, or undefined when it compiles. */
export function argumentsSchemaProblem(schema: JsonSchema): string | undefined {
  try {
    validatorFor(schema);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const validatorFor = schemaCache((schema): ValidateFunction => {
  // Not strict: schemas written for models carry keywords ajv does not know (`x-…`, `examples` in odd places).
  // Patterns match what a model wrote, on the worker: on the linear-time engine, never by backtracking.
  const ajv = addFormats.default(new Ajv2020({ allErrors: true, strict: false, useDefaults: true, code: { regExp: linearRegExp } }));
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw new ToolConfigError(`the tool's arguments_schema is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
});

function describe(error: ErrorObject): string {
  const path = ['arguments', ...error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))].join('.');
  switch (error.keyword) {
    case 'required':
      return `${path}.${String(error.params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${path}.${String(error.params.additionalProperty)} is not allowed`;
    default:
      return `${path} ${error.message ?? 'is invalid'}`;
  }
}
