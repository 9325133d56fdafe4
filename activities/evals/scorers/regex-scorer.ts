import { firstCodePoints } from '../../guardrails/code-points.js';
import { REGEX_INPUT_LIMIT } from '../../regex/input-limit.js';
import { LinearRegex, linearRegexProblem } from '../../regex/linear-regex.js';
import { MAX_REGEX_PATTERN_LENGTH, type RegexConfig } from './config-schemas.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';
import type { ScorerConfigProblem } from './types.js';

const ALLOWED_FLAGS = 'imsu';

/**
 * 1 when the pattern matches somewhere in the output, else 0. Patterns run on the linear-time engine,
 * as regex guardrails do, and only the first REGEX_INPUT_LIMIT characters are searched, for the same
 * reason: a match blocks the worker's event loop and cannot be interrupted.
 */
export const regexScorer: ScorerDefinition<RegexConfig> = {
  readsOutput: true,

  problems(config, path) {
    const problems: ScorerConfigProblem[] = [];
    const flags = config.flags ?? '';
    const unknownFlags = [...flags].filter((flag) => !ALLOWED_FLAGS.includes(flag));
    if (unknownFlags.length > 0) problems.push({ field: `${path}.flags`, message: `may only hold i, m, s and u, not ${unknownFlags.join('')}` });
    else if (new Set(flags).size !== flags.length) problems.push({ field: `${path}.flags`, message: 'repeats a flag' });
    if (config.pattern.length > MAX_REGEX_PATTERN_LENGTH) {
      problems.push({ field: `${path}.pattern`, message: `is longer than ${MAX_REGEX_PATTERN_LENGTH} characters` });
    }
    if (problems.length > 0) return problems;

    const unusable = linearRegexProblem(config.pattern, flags);
    return unusable ? [{ field: `${path}.pattern`, message: unusable }] : [];
  },

  expectedProblem: () => undefined,

  prepare(config) {
    const pattern = LinearRegex.compile(config.pattern, config.flags ?? '');
    return (subject) => {
      const output = outputOf(subject);
      const searched = firstCodePoints(output, REGEX_INPUT_LIMIT);
      if (pattern.test(searched)) return verdict(config, 1, 'the output matches the pattern');
      const beyond = searched.length < output.length ? ` in its first ${REGEX_INPUT_LIMIT} characters` : '';
      return verdict(config, 0, `the output does not match the pattern${beyond}`);
    };
  },
};
