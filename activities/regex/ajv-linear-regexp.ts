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
    const regex = compiled(pattern, flags);
    return {
      test: (text: string) => !beyondInputLimit(text) && !beyondDeadline() && regex.test(text),
      // Ajv keeps one compiled pattern per `toString()` of what this returns: it must tell patterns apart.
      toString: () => `/${pattern}/${flags}`,
    };
  },
  { code: 'linearRegExp' },
);

/**
 * The `code.regExp` of the API's own request validators (api/validation.ts). Their patterns are ours, but
 * Ajv (with `allErrors`) runs a `pattern` even on a string its `maxLength` already refused, so V8's
 * backtracking engine met whole request bodies: `^https?://[^\s/?#]+[^\s]*$` took 0.35 s on 20 000
 * characters and would take minutes on a megabyte. On the linear-time engine a megabyte takes ~15 ms,
 * a short string ~1 µs. There is no input limit or budget here: a request's strings are bounded by its
 * body's size, and a pattern RE2 cannot run fails the API's start instead.
 */
export const serviceRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const regex = compiled(pattern, flags);
    return { test: (text: string) => regex.test(text), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'serviceRegExp' },
);

function compiled(pattern: string, flags: string): LinearRegex {
  try {
    return LinearRegex.compile(pattern, flags);
  } catch (err) {
    if (err instanceof UnusableRegexError) throw new Error(`pattern ${JSON.stringify(pattern)} ${err.message}`, { cause: err });
    throw err;
  }
}

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
