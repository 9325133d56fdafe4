import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LinearRegex, linearRegexProblem, MAX_PROGRAM_SIZE } from '../activities/regex/linear-regex.js';

/** The non-empty matches V8 finds, as [start, end) pairs: what the linear-time engine must find too. */
function nativeSpans(pattern: string, flags: string, text: string): Array<[number, number]> {
  return [...text.matchAll(new RegExp(pattern, `${flags}g`))].filter((m) => m[0].length > 0).map((m) => [m.index, m.index + m[0].length]);
}

function linearSpans(pattern: string, flags: string, text: string): Array<[number, number]> {
  return LinearRegex.compile(pattern, flags)
    .spans(text, 1000)
    .spans.map((span) => [span.start, span.end]);
}

/**
 * JavaScript's meaning where RE2's syntax reads the same text otherwise (`why` says which, where it is
 * not plain): each pattern must find exactly what V8 finds, in `test` and in the list of matches.
 */
const SAME_AS_V8: Array<{ pattern: string; flags: string; texts: string[]; why?: string }> = JSON.parse(
  fs.readFileSync(path.resolve('test/fixtures/regex-same-as-v8.json'), 'utf8'),
);

describe('linear regex', () => {
  describe('means what JavaScript means', () => {
    for (const { pattern, flags, texts, why } of SAME_AS_V8) {
      it(`/${pattern}/${flags}${why ? `: ${why}` : ''}`, () => {
        const regex = LinearRegex.compile(pattern, flags);
        for (const text of texts) {
          expect(regex.test(text), JSON.stringify(text)).to.equal(new RegExp(pattern, flags).test(text));
          expect(linearSpans(pattern, flags, text), JSON.stringify(text)).to.deep.equal(nativeSpans(pattern, flags, text));
        }
      });
    }
  });

  it('refuses what it cannot run in linear time, saying why', () => {
    expect(linearRegexProblem('(?=a)a', '')).to.equal('uses the lookahead (?=…), which no linear-time engine runs');
    expect(linearRegexProblem('(?!a)b', 'u')).to.equal('uses the lookahead (?!…), which no linear-time engine runs');
    expect(linearRegexProblem('(a)\\1', '')).to.equal('uses the backreference \\1, which no linear-time engine runs');
    expect(linearRegexProblem('(?<q>a)\\k<q>', '')).to.equal('uses the backreference \\k<q>, which no linear-time engine runs');
    expect(linearRegexProblem('a\\01', '')).to.equal('uses a legacy octal escape; write \\x.. or \\u.... instead');
    expect(linearRegexProblem('\\p{Script_Extensions=Greek}', 'u')).to.equal('uses \\p{Script_Extensions=Greek}, which the linear-time engine does not know');
    expect(linearRegexProblem('a{1001}', '')).to.equal('cannot run in linear time: error parsing regexp: invalid repeat count: `{1001}`');
    expect(linearRegexProblem('(?:a?){1000}', '')).to.match(new RegExp(`^is too large \\(its program has \\d+ instructions, at most ${MAX_PROGRAM_SIZE} are allowed\\)$`));
    expect(linearRegexProblem('(', '')).to.equal('is not a valid regular expression: Invalid regular expression: /(/: Unterminated group');
  });

  it('accepts the shapes that backtrack catastrophically, a 1000-character literal and lookbehind', () => {
    for (const pattern of ['(a+)+$', '(a|a)*$', '(a|aa)*$', '\\d*\\d*\\d*$', 'a*a*a*a*b', '(.*a){20}', 'x'.repeat(1000), '(?<=a+)b']) {
      expect(linearRegexProblem(pattern, ''), pattern).to.equal(undefined);
    }
  });
});
