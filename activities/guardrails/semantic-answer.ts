/**
 * Reads the decision model's scores from its answer, forgivingly: the JSON object may sit in a code
 * fence or among other words, a score may come as a numeric string, a boolean or `{"score": n}`, and
 * scores outside [0, 1] are clamped. If no JSON object with a known id can be read, `"id": 0.8`-style
 * pairs are picked out of the text. An id without a usable score is absent from the result.
 */

// Bounds on the work a long or brace-heavy answer can cause.
const MAX_ANSWER_CHARS = 20_000;
const MAX_OBJECTS_TRIED = 50;

export function parseScores(answer: string, ids: readonly string[]): Map<string, number> {
  const text = answer.slice(0, MAX_ANSWER_CHARS);
  for (const object of jsonObjectsIn(text)) {
    const scores = scoresFrom(object, ids);
    if (scores.size > 0) return scores;
  }
  return scoresFromPairs(text, ids);
}

function* jsonObjectsIn(text: string): Generator<Record<string, unknown>> {
  let tried = 0;
  for (let start = text.indexOf('{'); start !== -1 && tried < MAX_OBJECTS_TRIED; start = text.indexOf('{', start + 1)) {
    const end = closingBrace(text, start);
    if (end === undefined) continue;
    tried++;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end + 1));
    } catch {
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) yield value as Record<string, unknown>;
  }
}

/** Index of the `}` that closes the `{` at `start`, skipping braces inside strings. */
function closingBrace(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{') {
      depth++;
    } else if (char === '}' && --depth === 0) {
      return i;
    }
  }
  return undefined;
}

function scoresFrom(object: Record<string, unknown>, ids: readonly string[]): Map<string, number> {
  const byLowerCase = new Map(Object.keys(object).map((key) => [key.toLowerCase(), key]));
  const scores = new Map<string, number>();
  for (const id of ids) {
    const key = Object.hasOwn(object, id) ? id : byLowerCase.get(id.toLowerCase());
    const score = key === undefined ? undefined : scoreOf(object[key]);
    if (score !== undefined) scores.set(id, score);
  }
  return scores;
}

function scoreOf(value: unknown, nested = false): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '') return scoreOf(Number(value), nested);
  if (typeof value === 'number') return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : undefined;
  if (!nested && typeof value === 'object' && value !== null && 'score' in value) return scoreOf(value.score, true);
  return undefined;
}

function scoresFromPairs(text: string, ids: readonly string[]): Map<string, number> {
  const scores = new Map<string, number>();
  for (const id of ids) {
    const escaped = id.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
    const pair = new RegExp(`(?<![\\w.-])["'\`]?${escaped}["'\`]?\\s*[:=]\\s*(-?\\d+(?:\\.\\d+)?)`, 'i').exec(text);
    if (pair) scores.set(id, scoreOf(Number(pair[1]))!);
  }
  return scores;
}
