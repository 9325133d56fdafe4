import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { JsonSchemaConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { REDACTED } from './spans.js';
import { schemaCache } from '../json-schema/cache.js';
import { linearRegExp, withinPatternBudget } from '../regex/ajv-linear-regexp.js';

/**
 * Trips when the text is not JSON, or is JSON that does not match `config.schema` (JSON Schema
 * 2020-12); the detail carries ajv's error text. Redaction replaces the whole text: there is no
 * part of an invalid document that could be kept.
 */
export const jsonSchemaGuardrail: GuardrailKindDefinition<JsonSchemaConfig> = {
  problems(config) {
    try {
      validatorFor(config.schema);
      return [];
    } catch (err) {
      return [{ field: 'config.schema', message: `is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}` }];
    }
  },

  prepare(config) {
    const { validate, errorsText } = validatorFor(config.schema);
    return (text) => {
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch {
        // The parser's message quotes the text; the detail need not.
        return { detail: 'text is not valid JSON', redact: () => REDACTED };
      }
      if (withinPatternBudget(() => validate(document))) return undefined;
      const errors = (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS);
      return { detail: `JSON does not match the schema: ${errorsText(errors)}`, redact: () => REDACTED };
    };
  },
};

const MAX_REPORTED_ERRORS = 10;

interface SchemaValidator {
  validate: ValidateFunction;
  errorsText: (errors: NonNullable<ValidateFunction['errors']>) => string;
}

/** Shared with the eval `json_schema` scorer, which validates model output the same way. */
export const validatorFor = schemaCache((schema): SchemaValidator => {
  // Unknown keywords are refused (a misspelt `required` would silently check nothing), but the
  // type-pedantic strict rules are not: a schema without `type` beside `properties` is fine.
  const ajv = addFormats.default(
    new Ajv2020({
      allErrors: true,
      strictSchema: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      allowUnionTypes: true,
      // Its strict check of property names against patternProperties would run the tenant's patterns on V8's
      // backtracking engine while compiling (ajv calls `new RegExp` there): off, matching names are fine.
      allowMatchingProperties: true,
      // Patterns in a tenant's schema run on model output too: on the linear-time engine, as regex guardrails do.
      code: { regExp: linearRegExp },
      logger: false,
    }),
  );
  return { validate: ajv.compile(schema), errorsText: (errors) => ajv.errorsText(errors, { dataVar: 'json' }) };
});
