/** A ```json (or bare ```) fence around the whole output, as models often write JSON. */
const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/** The output parsed as JSON, tolerating a surrounding code fence; undefined when it is not JSON. */
export function parseOutputJson(output: string): { value: unknown } | undefined {
  const trimmed = output.trim();
  const text = FENCE.exec(trimmed)?.[1] ?? trimmed;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted at every depth, so that two equal values have one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a JSON value is, for a reason: `an object`, `an array`, `a string`, `null`. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
