import { firstCodePoints } from './code-points.js';
import { MAX_REGEX_PATTERN_LENGTH, type RegexConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { REDACTED, replaceSpans, type Span } from './spans.js';
import type { GuardrailConfigProblem } from './types.js';
import { REGEX_INPUT_LIMIT } from '../regex/input-limit.js';
import { LinearRegex, linearRegexProblem } from '../regex/linear-regex.js';

/** Only the first REGEX_INPUT_LIMIT characters of a text are searched; redaction leaves the rest as it is. */
export { REGEX_INPUT_LIMIT };

/**
 * How long listing a text's matches may take (each search is linear, all of them together can be
 * quadratic: see LinearRegex.spans). A listing cut short redacts the unsearched rest of the searched text.
 */
const REGEX_LISTING_BUDGET_MS = 200;

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
    const unusable = linearRegexProblem(config.pattern, flags);
    return unusable ? [{ field: 'config.pattern', message: unusable }] : [];
  },

  prepare(config) {
    const pattern = LinearRegex.compile(config.pattern, config.flags ?? '');
    return (text) => {
      const searched = firstCodePoints(text, REGEX_INPUT_LIMIT);
      if (!pattern.test(searched)) return undefined;
      const { spans, searchedTo } = pattern.spans(searched, REGEX_LISTING_BUDGET_MS);
      if (spans.length === 0) return undefined; // only empty matches
      const beyond = searched.length < text.length ? ` in its first ${REGEX_INPUT_LIMIT} characters` : '';
      const count = searchedTo === undefined ? `${spans.length} time(s)` : `at least ${spans.length} time(s) (listing stopped at character ${searchedTo})`;
      // A listing cut short redacts what it did not search: a match there must not get through.
      const redacted: Span[] = searchedTo === undefined ? spans : [...spans, { start: searchedTo, end: searched.length }];
      return {
        // The matched text is not repeated: a pattern is often written to catch a secret.
        detail: `text matches the pattern ${count}${beyond}`,
        redact: () => replaceSpans(text, redacted, () => REDACTED),
      };
    };
  },
};
