import { expect } from 'chai';
import { scoreCell } from '../activities/evals/scorers/score-cell.js';
import type { ScoreContext, ScorerConfig, ScoringSubject } from '../activities/evals/scorers/types.js';
import { scorerConfigProblems } from '../activities/evals/scorers/validate.js';
import { applyGuardrails, GuardrailConfigError, guardrailConfigProblems } from '../activities/guardrails/index.js';
import { modelSettingsFromEnv } from '../activities/models/settings.js';
import { REGEX_INPUT_LIMIT } from '../activities/regex/input-limit.js';
import { argumentsSchemaProblem, validateArguments } from '../activities/tools/arguments-validator.js';
import { ToolConfigError } from '../activities/tools/errors.js';
import { failure } from './support/failure.js';
import { ApiError } from '../api/errors.js';
import { requestValidator } from '../api/validation.js';
import { guardrail } from './support/guardrail-fixtures.js';

/**
 * Every place a tenant's pattern meets a text, fed the pattern families that backtrack catastrophically
 * with a text of REGEX_INPUT_LIMIT (20 000) characters. On a backtracking engine each of these takes from
 * minutes (n³, n⁴) to longer than the universe has existed (2ⁿ); on the linear-time engine each takes
 * milliseconds. The bound is generous so the test is no timing test: it fails by orders of magnitude or not at all.
 */
const BOUND_MS = 1000;

interface Family {
  name: string;
  pattern: string;
  /** A text of exactly REGEX_INPUT_LIMIT characters that makes a backtracking engine try every way to match. */
  text: string;
  /** Whether the pattern matches the text somewhere (for every family here, with an empty match at most). */
  matches: boolean;
}

const n = REGEX_INPUT_LIMIT;
const FAMILIES: Family[] = [
  { name: 'nested quantifiers', pattern: '^(a+)+$', text: `${'a'.repeat(n - 1)}!`, matches: false },
  { name: 'alternation of equal branches', pattern: '^(a|a)*$', text: `${'a'.repeat(n - 1)}!`, matches: false },
  { name: 'alternation of overlapping branches', pattern: '^(a|aa)*$', text: `${'a'.repeat(n - 1)}!`, matches: false },
  // Matches only the empty string at the very end, after trying every split of the digits before the `a`.
  { name: 'polynomial, n⁴', pattern: '\\d*\\d*\\d*$', text: `${'1'.repeat(n - 1)}a`, matches: true },
  { name: 'polynomial, n⁵', pattern: 'a*a*a*a*b', text: 'a'.repeat(n), matches: false },
];

async function timed<T>(work: () => T | Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

function subject(output: string): ScoringSubject {
  return { input: 'x', output, expected: null, metadata: {}, toolCalls: [], costUsd: '0', latencyMs: 1 };
}

const scoreContext: ScoreContext = {
  signal: new AbortController().signal,
  embedder: () => {
    throw new Error('no scorer here embeds');
  },
  modelSettings: modelSettingsFromEnv({}),
  recordModelCall: () => {},
};

describe('regex: linear time on every path a tenant pattern takes', () => {
  for (const family of FAMILIES) {
    describe(`${family.name}: /${family.pattern}/ on ${family.text.length} characters`, () => {
      it('regex guardrail: accepted, and checked within the bound', async () => {
        expect(guardrailConfigProblems('regex', { pattern: family.pattern })).to.deep.equal([]);
        const { result, ms } = await timed(() => applyGuardrails([guardrail('regex', { pattern: family.pattern }, { action: 'redact' })], family.text, 'input'));
        expect(ms).to.be.below(BOUND_MS);
        expect(result.trips).to.deep.equal([]); // no family matches a non-empty stretch of its text
      });

      it('json_schema guardrail: a `pattern` and a `patternProperties` key, compiled and checked within the bound', async () => {
        // A property named like the text beside the patternProperties key: ajv's strict mode would match them by backtracking.
        const properties = { text: { type: 'string', pattern: family.pattern }, [family.text]: {} };
        const schema = { type: 'object', properties, patternProperties: { [family.pattern]: { type: ['integer', 'string'] } } };
        const checked = await timed(() => guardrailConfigProblems('json_schema', { schema }));
        expect(checked.ms).to.be.below(BOUND_MS);
        expect(checked.result).to.deep.equal([]);
        const document = JSON.stringify({ text: family.text, [family.text]: 1 });
        const { result, ms } = await timed(() => applyGuardrails([guardrail('json_schema', { schema }, { action: 'warn' })], document, 'output'));
        expect(ms).to.be.below(BOUND_MS);
        expect(result.trips).to.have.length(family.matches ? 0 : 1);
      });

      it("tool arguments: the arguments_schema's pattern is matched within the bound", async () => {
        const schema = { type: 'object', properties: { q: { type: 'string', pattern: family.pattern } } };
        const { result, ms } = await timed(() => {
          try {
            return validateArguments(schema, { q: family.text });
          } catch (err) {
            return err;
          }
        });
        expect(ms).to.be.below(BOUND_MS);
        if (family.matches) expect(result).to.deep.equal({ q: family.text });
        else expect((result as Error).message).to.equal(`invalid arguments: arguments.q must match pattern "${family.pattern}"`);
      });

      it('regex scorer: scored within the bound', async () => {
        const { result, ms } = await timed(() => scoreCell([{ type: 'regex', pattern: family.pattern } as ScorerConfig], subject(family.text), scoreContext));
        expect(ms).to.be.below(BOUND_MS);
        expect(result.failure).to.equal(null);
        expect(result.scores.regex!.score).to.equal(family.matches ? 1 : 0);
      });
    });
  }

  it('still finds what matches: the same families on texts they match', async () => {
    const matched = await applyGuardrails([guardrail('regex', { pattern: '^(a|aa)*$' }, { action: 'redact' })], 'a'.repeat(n), 'input');
    expect(matched.text).to.equal('[REDACTED]');
    expect(validateArguments({ type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } }, { q: 'a'.repeat(n) })).to.deep.equal({ q: 'a'.repeat(n) });
  });

  it('lists a match per character within the bound, though finding each may read to the end (quadratic on any engine)', async () => {
    // `(?:a.*b)?a` must look for a `b` to the end of the text before settling for `a`, at every one of 20 000 matches.
    const text = 'a'.repeat(n);
    const { result, ms } = await timed(() => applyGuardrails([guardrail('regex', { pattern: '(?:a.*b)?a' }, { action: 'redact' })], text, 'output'));
    expect(ms).to.be.below(BOUND_MS);
    // Fail closed: what the listing did not reach is redacted too, so no match gets through.
    expect(result.text).to.match(/^(\[REDACTED\])+$/);
    expect(result.trips[0]!.detail).to.match(/^text matches the pattern at least \d+ time\(s\) \(listing stopped at character \d+\)$/);
  });

  describe('backreferences (`(a*)\\1b`): refused, and never run, not even when stored before the rule', () => {
    const backreference = '(a*)\\1b';
    const text = 'a'.repeat(n);

    it('refused as a regex guardrail, a json_schema pattern, a scorer and a tool schema pattern', () => {
      expect(guardrailConfigProblems('regex', { pattern: backreference })).to.deep.equal([
        { field: 'config.pattern', message: 'uses the backreference \\1, which no linear-time engine runs' },
      ]);
      const [schemaProblem] = guardrailConfigProblems('json_schema', { schema: { type: 'string', pattern: backreference } });
      expect(schemaProblem!.field).to.equal('config.schema');
      expect(schemaProblem!.message).to.contain('uses the backreference \\1');
      expect(scorerConfigProblems([{ type: 'regex', pattern: backreference }])).to.deep.equal([
        { field: 'scorers[0].pattern', message: 'uses the backreference \\1, which no linear-time engine runs' },
      ]);
      expect(argumentsSchemaProblem({ type: 'object', properties: { q: { type: 'string', pattern: backreference } } })).to.contain('uses the backreference \\1');
    });

    it('a stored guardrail fails fast with GuardrailConfigError, before any matching', async () => {
      const { result, ms } = await timed(() => failure(applyGuardrails([guardrail('regex', { pattern: backreference }, { name: 'legacy' })], text, 'input')));
      expect(ms).to.be.below(BOUND_MS);
      expect(result).to.be.instanceOf(GuardrailConfigError);
    });

    it('a stored tool schema fails fast with ToolConfigError, before any matching', async () => {
      const schema = { type: 'object', properties: { q: { type: 'string', pattern: backreference } } };
      const { result, ms } = await timed(() => failure(Promise.resolve().then(() => validateArguments(schema, { q: text }))));
      expect(ms).to.be.below(BOUND_MS);
      expect(result).to.be.instanceOf(ToolConfigError);
      expect(result.message).to.contain('uses the backreference \\1');
    });

    it('a stored scorer fails its cell fast, naming the scorer', async () => {
      const { result, ms } = await timed(() => scoreCell([{ type: 'regex', pattern: backreference, name: 'legacy' } as ScorerConfig], subject(text), scoreContext));
      expect(ms).to.be.below(BOUND_MS);
      expect(result.failure).to.equal("scorer 'legacy' failed: its config is invalid: pattern uses the backreference \\1, which no linear-time engine runs");
    });
  });

  it('a schema that applies many patterns to long strings stops matching after its budget, and fails closed', async () => {
    // 400 distinct patterns, each over 100 strings of 20 000 characters: linear, but far beyond any useful work.
    const patterns = Array.from({ length: 400 }, (_, i) => ({ pattern: `^(?:a|b${i})*$` }));
    const schema = { type: 'object', properties: { items: { type: 'array', items: { type: 'string', allOf: patterns } } } };
    const items = Array.from({ length: 100 }, () => 'a'.repeat(n));
    const { result, ms } = await timed(() => failure(Promise.resolve().then(() => validateArguments(schema, { items }))));
    expect(ms).to.be.below(3 * BOUND_MS);
    expect(result.message).to.match(/must match pattern/);
  });

  it("keeps ajv-formats' own format checks (fixed patterns, run by V8) within the bound on the texts that stress them", async () => {
    // Not tenant patterns, but a tenant's schema picks which of them meet a model's text.
    const formats = ['date-time', 'time', 'duration', 'uri', 'uri-reference', 'uri-template', 'url', 'email', 'hostname', 'ipv6', 'regex', 'json-pointer', 'byte'];
    const texts = ['a', '0', 'a.', 'a-', '1.', ':', '/', '%', '1:'].map((unit) => `${unit.repeat(Math.floor(n / unit.length) - 1)}!`);
    texts.push(`a@${'a-'.repeat(n / 2 - 2)}!`, `http://${'a'.repeat(n - 8)}!`);
    for (const format of formats) {
      const schema = { type: 'object', properties: { q: { type: 'string', format } } };
      for (const text of texts) {
        const { ms } = await timed(() => {
          try {
            validateArguments(schema, { q: text });
          } catch {
            // Valid or not, only the time counts here.
          }
        });
        expect(ms, `${format} on ${JSON.stringify(text.slice(0, 12))}…`).to.be.below(BOUND_MS);
      }
    }
  });
});

describe("regex: linear time in the API's own request validation", () => {
  it('runs a schema pattern in linear time, even on a string its maxLength has already refused', async () => {
    // Ajv with allErrors runs `pattern` after `maxLength` failed: on V8's engine this text never ends.
    const validate = requestValidator('body', { type: 'object', properties: { name: { type: 'string', maxLength: 10, pattern: '^(a+)+$' } } });
    const { result, ms } = await timed(() => failure((async () => validate({ name: `${'a'.repeat(REGEX_INPUT_LIMIT)}!` }))()));
    expect(ms).to.be.below(BOUND_MS);
    expect(result).to.be.instanceOf(ApiError);
    expect((result as ApiError).status).to.equal(400);
    expect(((result as ApiError).toBody().error.fields as Array<{ field: string }>).map((f) => f.field)).to.include('body.name');
    // And it still matches what it should.
    expect(() => validate({ name: 'aaa' })).not.to.throw();
  });
});

