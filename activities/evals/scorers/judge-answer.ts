/** Bounds the work a long answer can cause. */
const MAX_ANSWER_CHARS = 20_000;
const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;
const BARE_NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export interface JudgeAnswer {
  score: number;
  reason: string | undefined;
}

/**
 * The judge's score: a JSON object `{"score": 0..1, "reason": "..."}` (in a code fence or among other
 * words too; a numeric string score is fine), or a bare number. Undefined for anything else, and for a
 * score outside [0, 1]: a judge that grades out of 10 is misread by clamping, so it is a failure instead.
 */
export function parseJudgeAnswer(answer: string): JudgeAnswer | undefined {
  const trimmed = answer.slice(0, MAX_ANSWER_CHARS).trim();
  const text = FENCE.exec(trimmed)?.[1]?.trim() ?? trimmed;
  if (BARE_NUMBER.test(text)) return inRange(Number(text), undefined);

  const object = jsonObjectIn(text);
  if (!object || !('score' in object)) return undefined;
  const { score, reason } = object;
  const value = typeof score === 'number' ? score : typeof score === 'string' && BARE_NUMBER.test(score.trim()) ? Number(score) : NaN;
  return inRange(value, typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : undefined);
}

function inRange(score: number, reason: string | undefined): JudgeAnswer | undefined {
  return Number.isFinite(score) && score >= 0 && score <= 1 ? { score, reason } : undefined;
}

/** The whole text as a JSON object, else the span from its first `{` to its last `}`. */
function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  for (const candidate of [text, text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)]) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // not this candidate
    }
  }
  return undefined;
}
