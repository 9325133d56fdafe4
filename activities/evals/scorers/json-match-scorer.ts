import type { JsonMatchConfig } from './config-schemas.js';
import { matchSubset } from './json-subset.js';
import { isPlainObject, parseOutputJson } from './output-json.js';
import { shortNumber } from './reason-text.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * The expected object (the config's `expected`, else the case's) must be a deep subset of the output
 * parsed as JSON; the score is the fraction of its leaves matched, so the default threshold of 1 asks
 * for all of them. The reason names the first path that differs.
 */
export const jsonMatchScorer: ScorerDefinition<JsonMatchConfig> = {
  readsOutput: true,

  problems: () => [],

  expectedProblem(config, expected) {
    return config.expected !== undefined || isPlainObject(expected) ? undefined : 'must be a JSON object (or give the scorer an `expected`)';
  },

  prepare(config) {
    return (subject) => {
      const expected = config.expected ?? subject.expected;
      if (!isPlainObject(expected)) throw new Error('has no `expected` and the case has no expected object to match');
      const parsed = parseOutputJson(outputOf(subject));
      if (!parsed) return verdict(config, 0, 'the output is not JSON');
      const match = matchSubset(expected, parsed.value);
      const score = match.total === 0 ? 1 : match.matched / match.total;
      if (match.firstMismatch === undefined) return verdict(config, score, 'the output holds the expected object');
      return verdict(config, score, `${match.matched} of ${match.total} expected value(s) match (score ${shortNumber(score)}); first difference at ${match.firstMismatch}`);
    };
  },
};
