import type { FieldError } from './errors.js';

/**
 * Text Postgres cannot store. `text` and `jsonb` hold no U+0000 (not even escaped as `\u0000`), and
 * `jsonb` refuses a lone UTF-16 surrogate (`"\ud800"`, which JSON may spell and JavaScript strings may
 * hold); such a value would fail in a query as a 500. No field of the API has a use for either, so every
 * request part is refused with a 400 naming each field (or object key) that holds one.
 */
function problemOf(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}

/** Where a request part (a parsed body, query or path parameters) holds text Postgres cannot store. */
export function unstorableTextFields(part: string, value: unknown): FieldError[] {
  const found: FieldError[] = [];
  const pending: Array<[unknown, string]> = [[value, part]];
  while (pending.length > 0) {
    const [item, field] = pending.pop()!;
    if (typeof item === 'string') {
      const problem = problemOf(item);
      if (problem) found.push({ field, message: problem });
    } else if (Array.isArray(item)) {
      item.forEach((child, index) => pending.push([child, `${field}.${index}`]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        const path = `${field}.${printable(key)}`;
        const problem = problemOf(key);
        if (problem) found.push({ field: path, message: `is a key that ${problem}` });
        pending.push([child, path]);
      }
    }
  }
  return found.sort((a, b) => a.field.localeCompare(b.field));
}

/** The names of the parameters of a query string or form whose name or value Postgres cannot store. */
export function unstorableTextParameters(params: URLSearchParams): string[] {
  const found = new Set<string>();
  for (const [name, value] of params) {
    if (problemOf(name) || problemOf(value)) found.add(printable(name));
  }
  return [...found].sort();
}

/** A field name as it can be shown in an error body (itself stored nowhere, but printed). */
function printable(name: string): string {
  return name.replace(/\0/g, '\\u0000').toWellFormed();
}
