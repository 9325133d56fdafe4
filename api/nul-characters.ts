import type { FieldError } from './errors.js';

/**
 * Where a request carries U+0000. Postgres stores no NUL in `text` or `jsonb` (not even escaped as
 * `\u0000`), so a NUL that reached a query would fail there as a 500; no field of the API has a use for
 * one, so every request part is refused with a 400 naming each field (or object key) that holds one.
 */
export function nulCharacterFields(part: string, value: unknown): FieldError[] {
  const found: FieldError[] = [];
  const pending: Array<[unknown, string]> = [[value, part]];
  while (pending.length > 0) {
    const [item, field] = pending.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\0')) found.push({ field, message: 'must not contain the NUL character (U+0000)' });
    } else if (Array.isArray(item)) {
      item.forEach((child, index) => pending.push([child, `${field}.${index}`]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        const path = `${field}.${key.replace(/\0/g, '\\u0000')}`;
        if (key.includes('\0')) found.push({ field: path, message: 'is a key with the NUL character (U+0000)' });
        pending.push([child, path]);
      }
    }
  }
  return found.sort((a, b) => a.field.localeCompare(b.field));
}

/** The names of the parameters of a query string or form that hold U+0000 in their name or value. */
export function nulCharacterParameters(params: URLSearchParams): string[] {
  const found = new Set<string>();
  for (const [name, value] of params) {
    if (name.includes('\0') || value.includes('\0')) found.add(name.replace(/\0/g, '\\u0000'));
  }
  return [...found].sort();
}
