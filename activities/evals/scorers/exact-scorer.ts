import type { ExactConfig } from './config-schemas.js';
import { canonicalJson, parseOutputJson } from './output-json.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * 1 when the output equals the expected string (by default ignoring surrounding whitespace, not
 * ignoring case), else 0. A non-string expected (an object) is compared with the output parsed as
 * JSON, key order aside; `case_sensitive` and `trim` do not apply to that comparison.
 */
export const exactScorer: ScorerDefinition<ExactConfig> = {
  readsOutput: true,

  problems: () => [],

  expectedProblem(_config, expected) {
    return expected === null || expected === undefined ? 'must be a string or an object' : undefined;
  },

  prepare(config) {
    const trim = config.trim ?? true;
    const caseSensitive = config.case_sensitive ?? true;
    const normalized = (text: string) => {
      const trimmed = trim ? text.trim() : text;
      return caseSensitive ? trimmed : trimmed.toLowerCase();
    };

    return (subject) => {
      const output = outputOf(subject);
      const { expected } = subject;
      if (expected === null || expected === undefined) throw new Error('the case has no expected value to compare the output with');
      if (typeof expected === 'string') {
        const [actual, wanted] = [normalized(output), normalized(expected)];
        if (actual === wanted) return verdict(config, 1, 'the output equals the expected string');
        return verdict(config, 0, `the output differs from the expected string ${whereTheyDiffer(actual, wanted)}`);
      }
      const parsed = parseOutputJson(output);
      if (!parsed) return verdict(config, 0, 'the output is not JSON, so it cannot equal the expected object');
      return canonicalJson(parsed.value) === canonicalJson(expected) ?
          verdict(config, 1, 'the output, parsed as JSON, equals the expected value')
        : verdict(config, 0, 'the output, parsed as JSON, differs from the expected value');
    };
  },
};

function whereTheyDiffer(actual: string, wanted: string): string {
  const actualChars = [...actual];
  const wantedChars = [...wanted];
  let index = 0;
  while (index < actualChars.length && index < wantedChars.length && actualChars[index] === wantedChars[index]) index++;
  return `from character ${index + 1} (the output has ${actualChars.length} characters, the expected string ${wantedChars.length})`;
}
