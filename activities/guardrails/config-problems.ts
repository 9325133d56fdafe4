import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { serviceRegExp } from '../regex/ajv-linear-regexp.js';
import { guardrailConfigSchemas } from './config-schemas.js';
import { GUARDRAIL_KIND_DEFINITIONS } from './kinds.js';
import { GUARDRAIL_MODEL_ENV } from './semantic-guardrail.js';
import { GUARDRAIL_KINDS, type GuardrailConfigProblem, type GuardrailKind } from './types.js';
import { uniqueProblems } from '../json-schema/unique-problems.js';

// Our schema over a request's config: its patterns run in linear time, as the API's own (api/validation.ts).
const ajv = new Ajv2020({ allErrors: true, strict: true, logger: false, code: { regExp: serviceRegExp } });
const schemaValidators = new Map<GuardrailKind, ValidateFunction>();

/**
 * Everything wrong with a guardrail's config, for a 400 at creation: first what the kind's JSON
 * Schema says, then (only for a config of the right shape) what it cannot say: a pattern that does
 * not compile or that the linear-time engine cannot run, a JSON Schema that does not compile, a semantic
 * guardrail without a decision model. Empty when the config is usable.
 *
 * `defaultDecisionModel` defaults to the GUARDRAIL_MODEL environment variable, as at evaluation;
 * `workspaceProviders` are the names of the workspace's provider connections.
 */
export function guardrailConfigProblems(
  kind: GuardrailKind,
  config: unknown,
  options: { defaultDecisionModel?: string; workspaceProviders?: ReadonlySet<string> } = {},
): GuardrailConfigProblem[] {
  if (!GUARDRAIL_KINDS.includes(kind)) return [{ field: 'kind', message: `must be one of ${GUARDRAIL_KINDS.join(', ')}` }];
  const validate = schemaValidator(kind);
  if (!validate(config)) return uniqueProblems((validate.errors ?? []).map(problemOf));
  const defaultDecisionModel = options.defaultDecisionModel ?? (process.env[GUARDRAIL_MODEL_ENV] || undefined);
  return GUARDRAIL_KIND_DEFINITIONS[kind].problems(config, { defaultDecisionModel, workspaceProviders: options.workspaceProviders });
}

function schemaValidator(kind: GuardrailKind): ValidateFunction {
  let validate = schemaValidators.get(kind);
  if (!validate) {
    validate = ajv.compile(guardrailConfigSchemas[kind]);
    schemaValidators.set(kind, validate);
  }
  return validate;
}

/** Named the way api/validation.ts names request fields: `config.keywords.3`, `config.questions.q1.threshold`. */
function problemOf(error: ErrorObject): GuardrailConfigProblem {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.propertyName !== undefined) segments.push(error.propertyName);
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  const message =
    error.keyword === 'additionalProperties' ? 'unknown field' : error.keyword === 'required' ? 'is required' : (error.message ?? 'is invalid');
  return { field: ['config', ...segments].join('.'), message };
}
