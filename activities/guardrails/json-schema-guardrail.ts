import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import type { JsonSchemaConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { regexSafetyProblem } from './regex-safety.js';
import { REDACTED } from './spans.js';
import { schemaCache } from '../json-schema/cache.js';

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
      if (validate(document)) return undefined;
      const errors = (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS);
      return { detail: `JSON does not match the schema: ${errorsText(errors)}`, redact: () => REDACTED };
    };
  },
};

const MAX_REPORTED_ERRORS = 10;

/**
 * Patterns in a tenant's schema (`pattern`, `patternProperties`) run on model output too, so they
 * pass the same safety check as regex guardrails: ajv compiles every pattern through this engine.
 */
const safeRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const problem = regexSafetyProblem(pattern, flags);
    if (problem) throw new Error(`pattern ${JSON.stringify(pattern)} ${problem}`);
    return new RegExp(pattern, flags);
  },
  { code: 'safeRegExp' },
);

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
      code: { regExp: safeRegExp },
      logger: false,
    }),
  );
  return { validate: ajv.compile(schema), errorsText: (errors) => ajv.errorsText(errors, { dataVar: 'json' }) };
});
