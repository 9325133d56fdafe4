import { canonicalJson, isPlainObject, jsonKind } from './output-json.js';
import { quoted } from './reason-text.js';

/** How much of an expected JSON value a document holds; see `matchSubset`. */
export interface SubsetMatch {
  /** Leaves of the expected value (scalars, empty objects and empty arrays) found at their place. */
  matched: number;
  total: number;
  /** Where the first difference is and what it is, e.g. `$.items[1].qty: expected 2, found 3`. */
  firstMismatch: string | undefined;
}

/**
 * Whether `expected` is a deep subset of `actual`: every key of an expected object must be in the
 * actual object with a matching value (other keys are ignored); arrays must have the same length and
 * match element by element; scalars must be equal. Counted per leaf, so that a near miss scores
 * higher than a wholly different document.
 */
export function matchSubset(expected: unknown, actual: unknown): SubsetMatch {
  const result: SubsetMatch = { matched: 0, total: 0, firstMismatch: undefined };
  compare(expected, actual, '$', result);
  return result;
}

function compare(expected: unknown, actual: unknown, path: string, result: SubsetMatch): void {
  if (isPlainObject(expected)) {
    const keys = Object.keys(expected);
    if (!isPlainObject(actual)) return mismatch(result, expected, `${path}: expected an object, found ${jsonKind(actual)}`);
    if (keys.length === 0) return leaf(result, true, '');
    for (const key of keys) {
      const childPath = `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
      if (!Object.hasOwn(actual, key)) mismatch(result, expected[key], `${childPath}: missing`);
      else compare(expected[key], actual[key], childPath, result);
    }
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return mismatch(result, expected, `${path}: expected an array, found ${jsonKind(actual)}`);
    if (actual.length !== expected.length) {
      return mismatch(result, expected, `${path}: expected an array of ${expected.length} item(s), found ${actual.length}`);
    }
    if (expected.length === 0) return leaf(result, true, '');
    expected.forEach((item, index) => compare(item, actual[index], `${path}[${index}]`, result));
    return;
  }
  leaf(result, canonicalJson(expected) === canonicalJson(actual), `${path}: expected ${shown(expected)}, found ${shown(actual)}`);
}

function leaf(result: SubsetMatch, matched: boolean, difference: string): void {
  result.total++;
  if (matched) result.matched++;
  else result.firstMismatch ??= difference;
}

/** Counts every leaf under an expected value that has no counterpart as unmatched. */
function mismatch(result: SubsetMatch, expected: unknown, difference: string): void {
  result.total += leafCount(expected);
  result.firstMismatch ??= difference;
}

function leafCount(value: unknown): number {
  const children = isPlainObject(value) ? Object.values(value) : Array.isArray(value) ? value : undefined;
  if (!children || children.length === 0) return 1;
  return children.reduce((sum: number, child) => sum + leafCount(child), 0);
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'object' && value !== null ? jsonKind(value) : quotedScalar(value);
}

function quotedScalar(value: unknown): string {
  return typeof value === 'string' ? quoted(value, 40) : String(value);
}
