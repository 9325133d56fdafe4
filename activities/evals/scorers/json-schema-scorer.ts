import { validatorFor } from '../../guardrails/json-schema-guardrail.js';
import { withinPatternBudget } from '../../regex/ajv-linear-regexp.js';
import type { JsonSchemaConfig } from './config-schemas.js';
import { parseOutputJson } from './output-json.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/** Errors named in a reason; the rest are counted. */
const REPORTED_ERRORS = 3;

/**
 * 1 when the output, parsed as JSON (a surrounding code fence is allowed), matches `schema`, else 0.
 * Schemas are compiled as the json_schema guardrail compiles them: strict about unknown keywords, and
 * every `pattern` in them runs on the linear-time engine (a pattern it cannot run is refused).
 */
export const jsonSchemaScorer: ScorerDefinition<JsonSchemaConfig> = {
  readsOutput: true,

  problems(config, path) {
    try {
      validatorFor(config.schema);
      return [];
    } catch (err) {
      return [{ field: `${path}.schema`, message: `is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}` }];
    }
  },

  expectedProblem: () => undefined,

  prepare(config) {
    const { validate, errorsText } = validatorFor(config.schema);
    return (subject) => {
      const parsed = parseOutputJson(outputOf(subject));
      if (!parsed) return verdict(config, 0, 'the output is not JSON');
      if (withinPatternBudget(() => validate(parsed.value))) return verdict(config, 1, 'the output matches the schema');
      const errors = validate.errors ?? [];
      const more = errors.length > REPORTED_ERRORS ? ` (and ${errors.length - REPORTED_ERRORS} more)` : '';
      return verdict(config, 0, `the output does not match the schema: ${errorsText(errors.slice(0, REPORTED_ERRORS))}${more}`);
    };
  },
};
