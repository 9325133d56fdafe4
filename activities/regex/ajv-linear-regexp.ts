import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { codePointLength } from '../guardrails/code-points.js';
import { REGEX_INPUT_LIMIT } from './input-limit.js';
import { LinearRegex, UnusableRegexError } from './linear-regex.js';

/**
 * The `code.regExp` of every Ajv instance that compiles a tenant's JSON Schema (`pattern`,
 * `patternProperties`, `propertyNames` patterns): patterns run on the linear-time engine, and one it
 * cannot run makes the schema fail to compile, which the config checks report as a 400.
 * A string longer than REGEX_INPUT_LIMIT characters matches no pattern, so validation fails closed.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    let regex: LinearRegex;
    try {
      regex = LinearRegex.compile(pattern, flags);
    } catch (err) {
      if (err instanceof UnusableRegexError) throw new Error(`pattern ${JSON.stringify(pattern)} ${err.message}`, { cause: err });
      throw err;
    }
    return {
      test: (text: string) => !beyondInputLimit(text) && !beyondDeadline() && regex.test(text),
      // Ajv keeps one compiled pattern per `toString()` of what this returns: it must tell patterns apart.
      toString: () => `/${pattern}/${flags}`,
    };
  },
  { code: 'linearRegExp' },
);

/**
 * How long the patterns of one validation may take together. Each match is linear, but a schema can
 * apply many patterns to many strings (`allOf` of a hundred patterns over every item of an array), so
 * one validation gets a budget; past it every pattern fails, and so does the validation.
 */
export const PATTERN_BUDGET_MS = 500;

let deadline: number | undefined;

/** Runs a synchronous Ajv validation with the patterns' budget. */
export function withinPatternBudget<T>(validation: () => T): T {
  const enclosing = deadline;
  deadline = performance.now() + PATTERN_BUDGET_MS;
  try {
    return validation();
  } finally {
    deadline = enclosing;
  }
}

function beyondInputLimit(text: string): boolean {
  return text.length > REGEX_INPUT_LIMIT && codePointLength(text) > REGEX_INPUT_LIMIT;
}

function beyondDeadline(): boolean {
  return deadline !== undefined && performance.now() > deadline;
}
