import { expect } from 'chai';
import { applyGuardrails, guardrailConfigProblems, REGEX_INPUT_LIMIT } from '../activities/guardrails/index.js';
import { guardrail, redacted, trips } from './support/guardrail-fixtures.js';

function patternProblem(pattern: string, flags?: string): string | undefined {
  const problems = guardrailConfigProblems('regex', flags === undefined ? { pattern } : { pattern, flags });
  return problems.map((problem) => `${problem.field} ${problem.message}`).join('; ') || undefined;
}

describe('guardrails engine: regex', () => {
  describe('config safety', () => {
    it('accepts nested quantifiers and overlapping alternations: the linear-time engine runs them (test/regex-linear-time.test.ts)', () => {
      for (const pattern of ['(a+)+', '(a*)*', '(.*)*', '(a+)*b', '(?:\\d+\\.)+\\d', '(a?){2,9}', '((ab)+c)+', '(?<word>\\w+\\s?)+$', '(x+x+)+y']) {
        expect(patternProblem(pattern), pattern).to.equal(undefined);
      }
      for (const pattern of ['(a|a)*', '(\\w|\\d)+', '(ab|a)+c', '(a|)+', '(?:x|[a-z])*', '(?:B|b){2,}', '\\d*\\d*\\d*$']) {
        expect(patternProblem(pattern, 'i'), pattern).to.equal(undefined);
      }
    });

    it('refuses lookahead, which no linear-time engine runs', () => {
      expect(patternProblem('(?:(?!END).)*END')).to.equal('config.pattern uses the lookahead (?!…), which no linear-time engine runs');
      expect(patternProblem('a(?=b)')).to.match(/^config\.pattern uses the lookahead \(\?=…\)/);
    });

    it('refuses backreferences', () => {
      expect(patternProblem('(a)\\1')).to.match(/backreference \\1/);
      expect(patternProblem('(?<q>["\'])\\w+\\k<q>')).to.match(/backreference \\k<q>/);
    });

    it('refuses invalid and overlong patterns and flags beyond i, m, s, u', () => {
      expect(patternProblem('(unclosed')).to.match(/^config\.pattern is not a valid regular expression: /);
      expect(patternProblem('\\p{Letter', 'u')).to.match(/is not a valid regular expression/);
      expect(patternProblem('x'.repeat(1001))).to.equal('config.pattern must NOT have more than 1000 characters');
      expect(patternProblem('x'.repeat(1000))).to.equal(undefined);
      expect(patternProblem('x', 'g')).to.equal('config.flags must match pattern "^[imsu]*$"');
      expect(patternProblem('x', 'y')).to.match(/^config\.flags/);
      expect(patternProblem('x', 'ii')).to.equal('config.flags repeats a flag');
      expect(patternProblem('')).to.equal('config.pattern must NOT have fewer than 1 characters');
    });

    it('accepts ordinary patterns', () => {
      const patterns = [
        '\\bpassword\\s*[:=]\\s*\\S+',
        'sk-[A-Za-z0-9]{20,}',
        '(https?://)?[\\w.-]+\\.com',
        '(?:cat|dog)+',
        '(?:\\d{3}-){2}\\d{4}',
        '(?<=\\$)\\d+', // lookbehind runs in linear time
        '^(?:[a-z]+\\s)?[A-Z]\\w*$',
        '[^@\\s]+@[^@\\s]+\\.[a-z]{2,}',
        '\\p{Lu}{2,}',
        '(\\d+)?x',
        'a{2,', // outside `u` mode a brace that is no quantifier is a literal
        '(?:ab){2,4}(?:ba)+',
        '(?<year>\\d{4})-(?<month>\\d{2})',
      ];
      for (const pattern of patterns) expect(patternProblem(pattern, pattern.includes('\\p') ? 'u' : undefined), pattern).to.equal(undefined);
    });
  });

  describe('evaluation', () => {
    it('redacts every match with [REDACTED], honouring flags', async () => {
      expect(await redacted('regex', { pattern: 'sk-[a-z0-9]{8}' }, 'keys sk-abcd1234 and sk-zzzz9999.')).to.equal('keys [REDACTED] and [REDACTED].');
      expect(await redacted('regex', { pattern: 'secret', flags: 'i' }, 'SeCrEt stuff')).to.equal('[REDACTED] stuff');
      expect(await redacted('regex', { pattern: '^token:.*$', flags: 'm' }, 'a\ntoken: 123\nb')).to.equal('a\n[REDACTED]\nb');
      expect(await redacted('regex', { pattern: 'BEGIN.*END', flags: 's' }, 'x BEGIN\nhidden\nEND y')).to.equal('x [REDACTED] y');
      expect(await redacted('regex', { pattern: '\\p{Emoji_Presentation}', flags: 'u' }, 'hi 😀!')).to.equal('hi [REDACTED]!');
    });

    it('is case-sensitive without the i flag', async () => {
      expect(await trips('regex', { pattern: 'secret' }, 'SECRET')).to.equal(false);
    });

    it('ignores empty matches, which would flag every text', async () => {
      expect(await trips('regex', { pattern: 'x*' }, 'abc')).to.equal(false);
      expect(await redacted('regex', { pattern: 'x*' }, 'axxb')).to.equal('a[REDACTED]b');
    });

    it('does not put the matched text in the detail', async () => {
      const outcome = await applyGuardrails([guardrail('regex', { pattern: 'sk-\\w+' }, { action: 'warn' })], 'key sk-live-123', 'input');
      expect(outcome.trips[0]!.detail).to.equal('text matches the pattern 1 time(s)');
    });

    it(`searches only the first ${REGEX_INPUT_LIMIT} characters, and keeps the rest when redacting`, async () => {
      const filler = 'a'.repeat(REGEX_INPUT_LIMIT - 6);
      const text = `${filler}secret secret`; // the first `secret` ends exactly at the limit
      const outcome = await applyGuardrails([guardrail('regex', { pattern: 'secret' }, { action: 'redact' })], text, 'input');
      expect(outcome.trips[0]!.detail).to.equal(`text matches the pattern 1 time(s) in its first ${REGEX_INPUT_LIMIT} characters`);
      expect(outcome.text).to.equal(`${filler}[REDACTED] secret`);
      expect(await trips('regex', { pattern: 'tail' }, `${'a'.repeat(REGEX_INPUT_LIMIT)}tail`)).to.equal(false);
    });
  });
});
