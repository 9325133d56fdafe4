import { firstCodePoints } from './code-points.js';
import { MAX_REGEX_PATTERN_LENGTH, type RegexConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { regexSafetyProblem } from './regex-safety.js';
import { matchSpans, REDACTED, replaceSpans } from './spans.js';
import type { GuardrailConfigProblem } from './types.js';

/**
 * Only this many characters (code points) of a text are searched. Even a pattern of star height 1
 * can be quadratic (`.*x` on a long line without an `x`: ~9 s at 100k characters, ~0.2 s at 20k), and
 * a match blocks the worker's event loop, so the work per text must have a low ceiling.
 * Redaction leaves the rest of the text as it is.
 */
export const REGEX_INPUT_LIMIT = 20_000;

const ALLOWED_FLAGS = 'imsu';

export const regexGuardrail: GuardrailKindDefinition<RegexConfig> = {
  problems(config) {
    const problems: GuardrailConfigProblem[] = [];
    const flags = config.flags ?? '';
    const unknownFlags = [...flags].filter((flag) => !ALLOWED_FLAGS.includes(flag));
    if (unknownFlags.length > 0) problems.push({ field: 'config.flags', message: `may only hold i, m, s and u, not ${unknownFlags.join('')}` });
    else if (new Set(flags).size !== flags.length) problems.push({ field: 'config.flags', message: 'repeats a flag' });
    if (config.pattern.length > MAX_REGEX_PATTERN_LENGTH) {
      problems.push({ field: 'config.pattern', message: `is longer than ${MAX_REGEX_PATTERN_LENGTH} characters` });
    }
    if (problems.length > 0) return problems;

    try {
      new RegExp(config.pattern, flags);
    } catch (err) {
      return [{ field: 'config.pattern', message: `is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}` }];
    }
    const unsafe = regexSafetyProblem(config.pattern, flags);
    return unsafe ? [{ field: 'config.pattern', message: unsafe }] : [];
  },

  prepare(config) {
    const pattern = new RegExp(config.pattern, `${config.flags ?? ''}g`);
    return (text) => {
      const searched = firstCodePoints(text, REGEX_INPUT_LIMIT);
      const spans = matchSpans(pattern, searched);
      if (spans.length === 0) return undefined;
      const beyond = searched.length < text.length ? ` in its first ${REGEX_INPUT_LIMIT} characters` : '';
      return {
        // The matched text is not repeated: a pattern is often written to catch a secret.
        detail: `text matches the pattern ${spans.length} time(s)${beyond}`,
        redact: () => replaceSpans(text, spans, () => REDACTED),
      };
    };
  },
};
