/** The case's expected value as text for a model: a string as it is, anything else as indented JSON; undefined when there is none. */
export function expectedText(expected: unknown): string | undefined {
  if (expected === null || expected === undefined) return undefined;
  if (typeof expected === 'string') return expected;
  return JSON.stringify(expected, null, 2);
}
