import type { ContainsConfig } from './config-schemas.js';
import { quoted, shortNumber } from './reason-text.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * The fraction of `value`s (default: the expected string) found in the output, as substrings, by
 * default with case. The default threshold of 1 asks for all of them.
 */
export const containsScorer: ScorerDefinition<ContainsConfig> = {
  readsOutput: true,

  problems: () => [],

  expectedProblem(config, expected) {
    if (config.value !== undefined) return undefined;
    return typeof expected === 'string' && expected !== '' ? undefined : 'must be a non-empty string (or give the scorer a `value`)';
  },

  prepare(config) {
    const caseSensitive = config.case_sensitive ?? true;
    const normalized = (text: string) => (caseSensitive ? text : text.toLowerCase());

    return (subject) => {
      const output = normalized(outputOf(subject));
      const values = valuesOf(config, subject.expected);
      const missing = values.filter((value) => !output.includes(normalized(value)));
      const score = (values.length - missing.length) / values.length;
      if (missing.length === 0) return verdict(config, score, `the output contains ${values.length === 1 ? 'the value' : `all ${values.length} values`}`);
      const shown = missing.slice(0, 5).map((value) => quoted(value)).join(', ');
      const more = missing.length > 5 ? ` and ${missing.length - 5} more` : '';
      return verdict(config, score, `the output lacks ${missing.length} of ${values.length} value(s) (score ${shortNumber(score)}): ${shown}${more}`);
    };
  },
};

function valuesOf(config: ContainsConfig, expected: unknown): string[] {
  if (config.value !== undefined) return typeof config.value === 'string' ? [config.value] : config.value;
  if (typeof expected !== 'string' || expected === '') throw new Error('has no `value` and the case has no expected string to look for');
  return [expected];
}
