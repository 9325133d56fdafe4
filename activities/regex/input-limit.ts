/**
 * Only this many characters (code points) of a text are matched against a tenant's pattern. The engine
 * is linear, but its time per character grows with the pattern (up to ~15 µs at the largest program
 * allowed), and a match blocks the worker's event loop, so the work per text must have a low ceiling.
 */
export const REGEX_INPUT_LIMIT = 20_000;
