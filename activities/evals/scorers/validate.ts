import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { serviceRegExp } from '../../regex/ajv-linear-regexp.js';
import { schemaCache } from '../../json-schema/cache.js';
import { MAX_SCORERS, scorerConfigSchemas } from './config-schemas.js';
import { SCORER_DEFINITIONS } from './kinds.js';
import { isPlainObject } from './output-json.js';
import { scorerName } from './scorer-name.js';
import { SCORER_TYPES, type ScorerConfigProblem, type ScorerType } from './types.js';
import { uniqueProblems } from '../../json-schema/unique-problems.js';

// Our schema over a request's config: its patterns run in linear time, as the API's own (api/validation.ts).
const ajv = new Ajv2020({ allErrors: true, strict: true, logger: false, code: { regExp: serviceRegExp } });
/** One compiled validator per type's schema, memoized like every other schema (activities/json-schema/cache.ts). */
const compiled = schemaCache((schema) => ajv.compile(schema));

/**
 * Everything wrong with a `scorers` list, for a 400: per scorer, first what its type's JSON Schema says,
 * then (only for a config of the right shape) what it cannot say: a pattern that does not compile or
 * that the linear-time engine cannot run, a JSON Schema that does not compile, a judge model that does not
 * exist. Then names used twice (a scorer's name is its `name`, else its type). Empty when usable.
 * Fields are paths from `path`: `scorers[0].type`, `scorers[2].tools[1]`. A judge model may name one of
 * `workspaceProviders` (the workspace's provider connections).
 */
export function scorerConfigProblems(scorers: unknown, path = 'scorers', workspaceProviders?: ReadonlySet<string>): ScorerConfigProblem[] {
  if (!Array.isArray(scorers)) return [{ field: path, message: 'must be an array of scorers' }];
  if (scorers.length > MAX_SCORERS) return [{ field: path, message: `must have at most ${MAX_SCORERS} scorers, not ${scorers.length}` }];
  const problems = scorers.flatMap((scorer: unknown, index) => scorerProblems(scorer, `${path}[${index}]`, workspaceProviders));
  return [...problems, ...duplicateNameProblems(scorers, path)];
}

/** Everything wrong with one scorer's config; `path` is its own, e.g. `scorers[2]`. */
export function scorerProblems(scorer: unknown, path: string, workspaceProviders?: ReadonlySet<string>): ScorerConfigProblem[] {
  if (!isPlainObject(scorer)) return [{ field: path, message: 'must be an object with a `type`' }];
  const { type } = scorer;
  if (type === undefined) return [{ field: `${path}.type`, message: `is required: one of ${SCORER_TYPES.join(', ')}` }];
  if (!isScorerType(type)) {
    return [{ field: `${path}.type`, message: `must be one of ${SCORER_TYPES.join(', ')}; ${JSON.stringify(type)} is not a scorer type` }];
  }
  const validate = schemaValidator(type);
  if (!validate(scorer)) return uniqueProblems(simplified(validate.errors ?? []).map((error) => problemOf(error, path, type)));
  return SCORER_DEFINITIONS[type].problems(scorer, path, workspaceProviders);
}

/**
 * What makes a case's `expected` unusable by these (valid) scorers: e.g. an `exact` scorer and no
 * expected value, a `numeric` scorer and an expected that is not a number. `path` names the expected
 * field, e.g. `cases[3].expected`. Entries of an unknown type are skipped: scorerConfigProblems reports them.
 */
export function expectedProblems(
  scorers: readonly { type: string; name?: string; [field: string]: unknown }[],
  expected: unknown,
  path = 'expected',
): ScorerConfigProblem[] {
  return scorers.flatMap((scorer) => {
    const { type } = scorer;
    if (!isScorerType(type)) return [];
    const problem = SCORER_DEFINITIONS[type].expectedProblem(scorer, expected);
    if (!problem) return [];
    const name = scorerName(scorer);
    const which = name === type ? `the ${name} scorer` : `the scorer '${name}' (${type})`;
    return [{ field: path, message: `${problem} for ${which}` }];
  });
}

export function isScorerType(type: unknown): type is ScorerType {
  return (SCORER_TYPES as readonly unknown[]).includes(type);
}

function schemaValidator(type: ScorerType): ValidateFunction {
  return compiled(scorerConfigSchemas[type]);
}

function duplicateNameProblems(scorers: unknown[], path: string): ScorerConfigProblem[] {
  const firstIndex = new Map<string, number>();
  const problems: ScorerConfigProblem[] = [];
  scorers.forEach((scorer, index) => {
    if (!isPlainObject(scorer)) return;
    const name = typeof scorer.name === 'string' ? scorer.name : typeof scorer.type === 'string' ? scorer.type : undefined;
    if (name === undefined) return;
    if (name === '__proto__') {
      // Scores are keyed by name in JSON objects, where this key would set the prototype instead.
      problems.push({ field: `${path}[${index}].name`, message: "may not be '__proto__'" });
      return;
    }
    const first = firstIndex.get(name);
    if (first === undefined) {
      firstIndex.set(name, index);
      return;
    }
    const field = typeof scorer.name === 'string' ? `${path}[${index}].name` : `${path}[${index}]`;
    problems.push({
      field,
      message: `is named '${name}' like ${path}[${first}]: a scorer's name (its \`name\`, else its type) keys its score, so give each a distinct \`name\``,
    });
  });
  return problems;
}

/**
 * ajv reports every branch of a failed `anyOf` (`value` is a string or an array of strings). Keep what
 * helps: the errors inside the branch the value's type chose, else one "must be string or array".
 */
function simplified(errors: ErrorObject[]): ErrorObject[] {
  let result = [...errors];
  const anyOfs = result.filter((error) => error.keyword === 'anyOf').sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const anyOf of anyOfs) {
    const prefix = anyOf.schemaPath.replace(/\/anyOf$/, '/anyOf/');
    const branches = result.filter((error) => error.schemaPath.startsWith(prefix));
    const deeper = branches.filter((error) => error.instancePath.length > anyOf.instancePath.length);
    const typeMatched = branches.filter((error) => error.keyword !== 'type');
    const types = branches.filter((error) => error.keyword === 'type').map((error) => String(error.params.type));
    const kept =
      deeper.length > 0 ? deeper
      : typeMatched.length > 0 ? typeMatched
      : [{ ...anyOf, message: `must be ${[...new Set(types)].join(' or ')}` }];
    result = [...result.filter((error) => error !== anyOf && !branches.includes(error)), ...kept];
  }
  return result;
}

function problemOf(error: ErrorObject, path: string, type: ScorerType): ScorerConfigProblem {
  let field = path + fieldPath(error.instancePath);
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    field += `.${String(error.params.missingProperty)}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    field += `.${String(error.params.additionalProperty)}`;
    message = `is not a field of the ${type} scorer`;
  }
  return { field, message };
}

/** `/tools/1` → `.tools[1]`. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('');
}
