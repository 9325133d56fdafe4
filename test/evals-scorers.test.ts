import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { closeSharedEmbedder, embeddingModelsRoot, missingModelFiles, sharedEmbedder } from '../activities/embedding/index.js';
import { scorersSchema } from '../activities/evals/scorers/config-schemas.js';
import { parseJudgeAnswer } from '../activities/evals/scorers/judge-answer.js';
import { judgeMessages } from '../activities/evals/scorers/judge-prompt.js';
import { scoreCell } from '../activities/evals/scorers/score-cell.js';
import type { Score, ScoreContext, ScorerConfig, ScorerModelCall, ScoringSubject } from '../activities/evals/scorers/types.js';
import { expectedProblems, scorerConfigProblems } from '../activities/evals/scorers/validate.js';
import { modelSettingsFromEnv } from '../activities/models/settings.js';

/** A cell's subject, with the fields a test does not care about filled in. */
function subject(fields: Partial<ScoringSubject> = {}): ScoringSubject {
  return { input: 'What is the capital of France?', output: 'Paris', expected: null, metadata: {}, toolCalls: [], costUsd: '0.001', latencyMs: 1200, ...fields };
}

/** A scoring context on the real embedder and no provider keys; `calls` collects the judge calls reported. */
function scoringContext(signal: AbortSignal = new AbortController().signal): { context: ScoreContext; calls: ScorerModelCall[] } {
  const calls: ScorerModelCall[] = [];
  const context: ScoreContext = {
    signal,
    embedder: () => sharedEmbedder(),
    modelSettings: modelSettingsFromEnv({}),
    recordModelCall: (call) => calls.push(call),
  };
  return { context, calls };
}

/** The score of one scorer on one subject; fails the test when the scorer broke. */
async function scoreOf(scorer: Record<string, unknown>, fields: Partial<ScoringSubject> = {}): Promise<Score> {
  const config = scorer as ScorerConfig;
  const result = await scoreCell([config], subject(fields), scoringContext().context);
  expect(result.failure, 'the scorer failed').to.equal(null);
  const score = result.scores[config.name ?? config.type];
  expect(score).to.not.equal(undefined);
  expect(result.passed).to.equal(score!.passed);
  return score!;
}

/** The `failure` of one scorer on one subject; fails the test when it did not break. */
async function failureOf(scorer: Record<string, unknown>, fields: Partial<ScoringSubject> = {}): Promise<string> {
  const result = await scoreCell([scorer as ScorerConfig], subject(fields), scoringContext().context);
  expect(result.passed).to.equal(false);
  expect(result.failure).to.be.a('string');
  return result.failure!;
}

function problemsOf(scorers: unknown): string[] {
  return scorerConfigProblems(scorers).map((p) => `${p.field} ${p.message}`);
}

const scriptedJudge = (answer: string, fields: Record<string, unknown> = {}) => ({
  type: 'llm_judge',
  model: 'scripted',
  rubric: 'Does the answer to {{input}} match {{expected}}? Answer: {{output}}',
  script: [{ text: answer }],
  ...fields,
});

describe('eval scorers', () => {
  describe('config validation', () => {
    it('accepts a config of every type', () => {
      const all = [
        { type: 'exact', case_sensitive: false, trim: true },
        { type: 'contains', value: ['Paris', 'France'], threshold: 0.5 },
        { type: 'regex', pattern: '^paris\\b', flags: 'im' },
        { type: 'json_schema', schema: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } } },
        { type: 'json_match', expected: { city: 'Paris' } },
        { type: 'numeric', tolerance: 0.5, relative_tolerance: 0.01 },
        { type: 'semantic_similarity', threshold: 0.7, name: 'similar' },
        { type: 'llm_judge', model: 'openai/gpt-4.1-mini', rubric: 'Is {{output}} polite?' },
        { type: 'llm_judge', model: 'scripted', rubric: 'Is it polite?', script: [{ text: '{"score": 1}' }], name: 'judge.2' },
        { type: 'tool_called', tools: ['search', 'calculator'], ordered: true },
        { type: 'cost_max', max_usd: '0.002' },
        { type: 'cost_max', max_usd: 0.5, name: 'cost_loose' },
        { type: 'latency_max', max_ms: 5000 },
      ];
      expect(problemsOf(all)).to.deep.equal([]);
      expect(problemsOf([])).to.deep.equal([]);
    });

    it('answers an unknown or missing type by listing the types', () => {
      expect(problemsOf([{ type: 'exact' }, { type: 'fuzzy' }])).to.deep.equal([
        'scorers[1].type must be one of exact, contains, regex, json_schema, json_match, numeric, semantic_similarity, llm_judge, ' +
          'tool_called, cost_max, latency_max; "fuzzy" is not a scorer type',
      ]);
      expect(problemsOf([{ name: 'x' }])[0]).to.match(/^scorers\[0\]\.type is required: one of exact, contains/);
      expect(problemsOf(['exact'])).to.deep.equal(['scorers[0] must be an object with a `type`']);
    });

    it('refuses a list that is not an array or is too long', () => {
      expect(problemsOf({ type: 'exact' })).to.deep.equal(['scorers must be an array of scorers']);
      const many = Array.from({ length: 21 }, (_, i) => ({ type: 'exact', name: `e${i}` }));
      expect(problemsOf(many)).to.deep.equal(['scorers must have at most 20 scorers, not 21']);
      expect(scorerConfigProblems(7, 'body.scorers')).to.deep.equal([{ field: 'body.scorers', message: 'must be an array of scorers' }]);
    });

    it('names the field of a schema error', () => {
      expect(problemsOf([{ type: 'exact', pattern: 'x' }])).to.deep.equal(['scorers[0].pattern is not a field of the exact scorer']);
      expect(problemsOf([{ type: 'exact', threshold: 1.5 }])).to.deep.equal(['scorers[0].threshold must be <= 1']);
      expect(problemsOf([{ type: 'exact', name: 'has space' }])).to.deep.equal(['scorers[0].name must match pattern "^[A-Za-z0-9_.-]+$"']);
      expect(problemsOf([{ type: 'regex' }])).to.deep.equal(['scorers[0].pattern is required']);
      expect(problemsOf([{ type: 'tool_called', tools: [] }])).to.deep.equal(['scorers[0].tools must NOT have fewer than 1 items']);
      expect(problemsOf([{ type: 'tool_called', tools: ['a', ''] }])).to.deep.equal(['scorers[0].tools[1] must NOT have fewer than 1 characters']);
      expect(problemsOf([{ type: 'latency_max', max_ms: 1.5 }])).to.deep.equal(['scorers[0].max_ms must be integer']);
      expect(problemsOf([{ type: 'latency_max', max_ms: 0 }])).to.deep.equal(['scorers[0].max_ms must be >= 1']);
      expect(problemsOf([{ type: 'numeric', tolerance: -1 }])).to.deep.equal(['scorers[0].tolerance must be >= 0']);
    });

    it('explains a field of two shapes by the shape that was meant', () => {
      expect(problemsOf([{ type: 'contains', value: 5 }])).to.deep.equal(['scorers[0].value must be string or array']);
      expect(problemsOf([{ type: 'contains', value: ['Paris', ''] }])).to.deep.equal(['scorers[0].value[1] must NOT have fewer than 1 characters']);
      expect(problemsOf([{ type: 'contains', value: '' }])).to.deep.equal(['scorers[0].value must NOT have fewer than 1 characters']);
      expect(problemsOf([{ type: 'cost_max', max_usd: '-1' }])).to.deep.equal(['scorers[0].max_usd must match pattern "^\\d{1,12}(\\.\\d{1,20})?$"']);
      expect(problemsOf([{ type: 'cost_max', max_usd: -1 }])).to.deep.equal(['scorers[0].max_usd must be >= 0']);
      expect(problemsOf([{ type: 'cost_max', max_usd: true }])).to.deep.equal(['scorers[0].max_usd must be string or number']);
    });

    it('refuses a regex the linear-time engine cannot run, does not compile, or has other flags', () => {
      expect(problemsOf([{ type: 'regex', pattern: 'a(?=b)' }])).to.deep.equal([
        'scorers[0].pattern uses the lookahead (?=…), which no linear-time engine runs',
      ]);
      expect(problemsOf([{ type: 'regex', pattern: '(a+)+$' }])).to.deep.equal([]); // runs in linear time
      expect(problemsOf([{ type: 'regex', pattern: '(a)\\1' }])[0]).to.match(/backreference/);
      expect(problemsOf([{ type: 'regex', pattern: '(' }])[0]).to.match(/^scorers\[0\]\.pattern is not a valid regular expression/);
      expect(problemsOf([{ type: 'regex', pattern: 'a', flags: 'g' }])).to.deep.equal(['scorers[0].flags must match pattern "^[imsu]*$"']);
      expect(problemsOf([{ type: 'regex', pattern: 'a', flags: 'ii' }])).to.deep.equal(['scorers[0].flags repeats a flag']);
    });

    it('refuses a JSON Schema that does not compile or holds an unsafe pattern', () => {
      expect(problemsOf([{ type: 'json_schema', schema: { type: 'object', requird: ['x'] } }])[0]).to.match(
        /^scorers\[0\]\.schema is not a usable JSON Schema: strict mode: unknown keyword: "requird"/,
      );
      expect(problemsOf([{ type: 'json_schema', schema: { type: 'string', pattern: '(a)\\1' } }])[0]).to.match(/uses the backreference/);
    });

    it('checks the judge model, its script and the rubric placeholders', () => {
      expect(problemsOf([{ type: 'llm_judge', model: 'scripted', rubric: 'Is it right?' }])).to.deep.equal([
        'scorers[0].script is required with the scripted judge model',
      ]);
      expect(problemsOf([{ type: 'llm_judge', model: 'openai/gpt-4.1', rubric: 'x', script: [{ text: '1' }] }])).to.deep.equal([
        'scorers[0].script is only for the scripted judge model',
      ]);
      expect(problemsOf([{ type: 'llm_judge', model: 'acme/judge-1', rubric: 'x' }])).to.deep.equal([
        "scorers[0].model is 'acme/judge-1', whose provider is not one of openai, anthropic, ollama, scripted or the workspace's provider connections",
      ]);
      expect(problemsOf([{ type: 'llm_judge', model: 'openai', rubric: 'x' }])).to.deep.equal([
        "scorers[0].model is 'openai', which names no model: use 'openai/<model>'",
      ]);
      expect(problemsOf([{ type: 'llm_judge', model: 'openai/gpt-4.1' }])).to.deep.equal(['scorers[0].rubric is required']);
      expect(problemsOf([{ type: 'llm_judge', model: 'openai/gpt-4.1', rubric: 'Compare {{answer}} with {{ expected }}' }])).to.deep.equal([
        'scorers[0].rubric uses {{answer}}; the placeholders are {{input}}, {{output}} and {{expected}}',
      ]);
    });

    it('refuses two scorers of one name (the name, else the type)', () => {
      expect(problemsOf([{ type: 'exact' }, { type: 'contains', value: 'a' }, { type: 'exact' }])).to.deep.equal([
        "scorers[2] is named 'exact' like scorers[0]: a scorer's name (its `name`, else its type) keys its score, so give each a distinct `name`",
      ]);
      expect(problemsOf([{ type: 'regex', pattern: 'a', name: 'check' }, { type: 'contains', value: 'b', name: 'check' }])[0]).to.match(
        /^scorers\[1\]\.name is named 'check' like scorers\[0\]/,
      );
      expect(problemsOf([{ type: 'exact', name: 'contains' }, { type: 'contains', value: 'b' }])).to.have.length(1);
      expect(problemsOf([{ type: 'exact', name: 'strict' }, { type: 'exact', name: 'loose', case_sensitive: false }])).to.deep.equal([]);
    });

    it('offers a strict-clean JSON Schema of a whole scorers list', () => {
      const validate = new Ajv2020({ strict: true, logger: false }).compile(scorersSchema);
      expect(validate([{ type: 'exact' }, { type: 'regex', pattern: 'a' }, scriptedJudge('1')])).to.equal(true);
      expect(validate([{ type: 'fuzzy' }])).to.equal(false);
      expect(validate([{ type: 'exact', pattern: 'a' }])).to.equal(false);
      expect(validate(Array.from({ length: 21 }, () => ({ type: 'exact' })))).to.equal(false);
      expect(JSON.stringify(scorersSchema)).to.not.contain('"default"');
    });
  });

  describe('expected values', () => {
    const problems = (scorers: Record<string, unknown>[], expected: unknown) =>
      expectedProblems(scorers as ScorerConfig[], expected).map((p) => `${p.field} ${p.message}`);

    it('reports a scorer that needs an expected value the case lacks or has of the wrong type', () => {
      expect(problems([{ type: 'exact' }], null)).to.deep.equal(['expected must be a string or an object for the exact scorer']);
      expect(problems([{ type: 'semantic_similarity' }], null)).to.deep.equal([
        'expected must be a non-empty string or an object for the semantic_similarity scorer',
      ]);
      expect(problems([{ type: 'numeric', name: 'answer' }], 'forty-two')).to.deep.equal([
        "expected must be a number or a numeric string for the scorer 'answer' (numeric)",
      ]);
      expect(problems([{ type: 'json_match' }], 'a string')).to.deep.equal([
        'expected must be a JSON object (or give the scorer an `expected`) for the json_match scorer',
      ]);
      expect(problems([{ type: 'contains' }], { a: 1 })).to.deep.equal([
        'expected must be a non-empty string (or give the scorer a `value`) for the contains scorer',
      ]);
      expect(expectedProblems([{ type: 'exact' }], undefined, 'body.cases[2].expected')).to.deep.equal([
        { field: 'body.cases[2].expected', message: 'must be a string or an object for the exact scorer' },
      ]);
    });

    it('accepts what each scorer can use, and scorers that need none', () => {
      expect(problems([{ type: 'numeric' }], 42)).to.deep.equal([]);
      expect(problems([{ type: 'numeric' }], ' 1,234.5 ')).to.deep.equal([]);
      expect(problems([{ type: 'exact' }, { type: 'semantic_similarity' }], { city: 'Paris' })).to.deep.equal([]);
      expect(problems([{ type: 'json_match', expected: { a: 1 } }, { type: 'contains', value: 'x' }], null)).to.deep.equal([]);
      const needNone = [
        { type: 'regex', pattern: 'a' },
        { type: 'json_schema', schema: {} },
        scriptedJudge('1'),
        { type: 'tool_called', tools: ['a'] },
        { type: 'cost_max', max_usd: '1' },
        { type: 'latency_max', max_ms: 1 },
        { type: 'not_a_type' },
      ];
      expect(problems(needNone, null)).to.deep.equal([]);
    });
  });

  describe('exact', () => {
    it('passes on an equal string, ignoring surrounding whitespace but not case by default', async () => {
      expect(await scoreOf({ type: 'exact' }, { output: '  Paris\n', expected: 'Paris' })).to.deep.equal({
        score: 1,
        passed: true,
        reason: 'the output equals the expected string',
      });
      const differs = await scoreOf({ type: 'exact' }, { output: 'paris', expected: 'Paris' });
      expect(differs).to.deep.include({ score: 0, passed: false });
      expect(differs.reason).to.equal('the output differs from the expected string from character 1 (the output has 5 characters, the expected string 5)');
    });

    it('follows case_sensitive and trim', async () => {
      expect((await scoreOf({ type: 'exact', case_sensitive: false }, { output: 'PARIS', expected: 'paris' })).passed).to.equal(true);
      expect((await scoreOf({ type: 'exact', trim: false }, { output: 'Paris ', expected: 'Paris' })).passed).to.equal(false);
    });

    it('compares an object expected with the output parsed as JSON, fence and key order aside', async () => {
      const expected = { city: 'Paris', country: { code: 'FR', eu: true } };
      const fenced = '```json\n{"country": {"eu": true, "code": "FR"}, "city": "Paris"}\n```';
      expect((await scoreOf({ type: 'exact' }, { output: fenced, expected })).passed).to.equal(true);
      expect((await scoreOf({ type: 'exact' }, { output: '{"city": "Paris"}', expected })).passed).to.equal(false);
      expect((await scoreOf({ type: 'exact' }, { output: 'Paris, France', expected })).reason).to.equal(
        'the output is not JSON, so it cannot equal the expected object',
      );
    });

    it('passes a 0 under a threshold of 0', async () => {
      expect(await scoreOf({ type: 'exact', threshold: 0 }, { output: 'Lyon', expected: 'Paris' })).to.deep.include({ score: 0, passed: true });
    });
  });

  describe('contains', () => {
    it('scores the fraction of values found; all are needed by default', async () => {
      const score = await scoreOf({ type: 'contains', value: ['Paris', 'France', 'Seine'] }, { output: 'Paris is in France.' });
      expect(score.score).to.be.closeTo(2 / 3, 1e-9);
      expect(score.passed).to.equal(false);
      expect(score.reason).to.equal('the output lacks 1 of 3 value(s) (score 0.6667): "Seine"');
      expect((await scoreOf({ type: 'contains', value: ['Paris', 'France', 'Seine'], threshold: 0.6 }, { output: 'Paris is in France.' })).passed).to.equal(true);
    });

    it('looks for the expected string by default, with case unless told otherwise', async () => {
      expect(await scoreOf({ type: 'contains' }, { output: 'The capital is Paris.', expected: 'Paris' })).to.deep.include({ score: 1, passed: true });
      expect((await scoreOf({ type: 'contains' }, { output: 'the capital is paris.', expected: 'Paris' })).passed).to.equal(false);
      expect((await scoreOf({ type: 'contains', case_sensitive: false }, { output: 'the capital is paris.', expected: 'Paris' })).passed).to.equal(true);
    });

    it('fails (the scorer, not the score) without a value or an expected string', async () => {
      expect(await failureOf({ type: 'contains' }, { expected: null })).to.equal(
        "scorer 'contains' failed: has no `value` and the case has no expected string to look for",
      );
    });
  });

  describe('regex', () => {
    it('scores 1 when the pattern matches somewhere in the output', async () => {
      expect(await scoreOf({ type: 'regex', pattern: '\\bParis\\b' }, { output: 'It is Paris.' })).to.deep.equal({
        score: 1,
        passed: true,
        reason: 'the output matches the pattern',
      });
      expect((await scoreOf({ type: 'regex', pattern: '^paris$' }, { output: 'Paris' })).score).to.equal(0);
      expect((await scoreOf({ type: 'regex', pattern: '^paris$', flags: 'i' }, { output: 'Paris' })).score).to.equal(1);
    });

    it('searches only the first 20,000 characters', async () => {
      const late = `${'x'.repeat(20_000)}needle`;
      expect(await scoreOf({ type: 'regex', pattern: 'needle' }, { output: late })).to.deep.equal({
        score: 0,
        passed: false,
        reason: 'the output does not match the pattern in its first 20000 characters',
      });
      expect((await scoreOf({ type: 'regex', pattern: 'needle' }, { output: late.slice(10) })).score).to.equal(1);
    });
  });

  describe('json_schema', () => {
    const schema = { type: 'object', required: ['city', 'population'], properties: { city: { type: 'string' }, population: { type: 'integer' } } };

    it('passes JSON (fenced or not) that matches the schema', async () => {
      expect((await scoreOf({ type: 'json_schema', schema }, { output: '{"city": "Paris", "population": 2102650}' })).passed).to.equal(true);
      expect((await scoreOf({ type: 'json_schema', schema }, { output: '```json\n{"city": "Paris", "population": 1}\n```' })).passed).to.equal(true);
    });

    it('names the first errors, and refuses what is not JSON', async () => {
      const score = await scoreOf({ type: 'json_schema', schema }, { output: '{"city": 75, "population": "many"}' });
      expect(score).to.deep.include({ score: 0, passed: false });
      expect(score.reason).to.equal('the output does not match the schema: json/city must be string, json/population must be integer');
      expect((await scoreOf({ type: 'json_schema', schema }, { output: 'Paris has 2.1 million people.' })).reason).to.equal('the output is not JSON');
    });
  });

  describe('json_match', () => {
    const expected = { city: 'Paris', facts: { river: 'Seine', arrondissements: 20 }, landmarks: ['Louvre', 'Eiffel Tower'] };

    it('passes when the expected object is a subset of the output', async () => {
      const output = JSON.stringify({ ...expected, country: 'France', facts: { ...expected.facts, mayor: 'someone' } });
      expect(await scoreOf({ type: 'json_match' }, { output, expected })).to.deep.equal({
        score: 1,
        passed: true,
        reason: 'the output holds the expected object',
      });
    });

    it('scores the fraction of expected values matched and names the first difference', async () => {
      const output = JSON.stringify({ city: 'Paris', facts: { river: 'Seine', arrondissements: 19 }, landmarks: ['Louvre', 'Eiffel Tower'] });
      const score = await scoreOf({ type: 'json_match' }, { output, expected });
      expect(score.score).to.equal(4 / 5);
      expect(score.reason).to.equal('4 of 5 expected value(s) match (score 0.8); first difference at $.facts.arrondissements: expected 20, found 19');
      expect((await scoreOf({ type: 'json_match', threshold: 0.8 }, { output, expected })).passed).to.equal(true);
    });

    it('compares arrays element by element and needs equal lengths', async () => {
      const output = JSON.stringify({ ...expected, landmarks: ['Louvre', 'Eiffel Tower', 'Notre-Dame'] });
      const score = await scoreOf({ type: 'json_match' }, { output, expected });
      expect(score.score).to.equal(3 / 5);
      expect(score.reason).to.contain('first difference at $.landmarks: expected an array of 2 item(s), found 3');
      const missing = await scoreOf({ type: 'json_match' }, { output: '{"city": "Paris"}', expected });
      expect(missing.reason).to.contain('first difference at $.facts: missing');
    });

    it("uses the config's expected over the case's, and refuses what is not JSON", async () => {
      const config = { type: 'json_match', expected: { ok: true } };
      expect((await scoreOf(config, { output: '{"ok": true, "n": 1}', expected: { ok: false } })).passed).to.equal(true);
      expect((await scoreOf(config, { output: 'ok' })).reason).to.equal('the output is not JSON');
    });
  });

  describe('numeric', () => {
    it('compares the first number in the output with the expected number, exactly by default', async () => {
      expect(await scoreOf({ type: 'numeric' }, { output: 'The answer is 42.', expected: 42 })).to.deep.equal({
        score: 1,
        passed: true,
        reason: "the output's first number 42 is within 0 of 42 (difference 0)",
      });
      expect((await scoreOf({ type: 'numeric' }, { output: 'It costs 1,234.50 euros', expected: '1234.5' })).passed).to.equal(true);
      expect((await scoreOf({ type: 'numeric' }, { output: '0.30000000000000004', expected: 0.3 })).passed).to.equal(false);
      expect((await scoreOf({ type: 'numeric' }, { output: 'I do not know.', expected: 42 })).reason).to.equal('the output holds no number');
    });

    it('allows an absolute or a relative tolerance', async () => {
      expect((await scoreOf({ type: 'numeric', tolerance: 0.5 }, { output: '3.6', expected: 4 })).passed).to.equal(true);
      expect((await scoreOf({ type: 'numeric', tolerance: 0.5 }, { output: '3.4', expected: 4 })).passed).to.equal(false);
      expect((await scoreOf({ type: 'numeric', relative_tolerance: 0.01 }, { output: '1005', expected: 1000 })).passed).to.equal(true);
      expect((await scoreOf({ type: 'numeric', relative_tolerance: 0.01 }, { output: '-1011', expected: -1000 })).passed).to.equal(false);
      expect((await scoreOf({ type: 'numeric', tolerance: 20, relative_tolerance: 0.01 }, { output: '1015', expected: 1000 })).passed).to.equal(true);
    });

    it('fails (the scorer) when the case has no expected number', async () => {
      expect(await failureOf({ type: 'numeric' }, { output: '1', expected: 'many' })).to.contain('the case has no expected number');
    });
  });

  describe('semantic_similarity (the real embedder)', function () {
    before(function () {
      const missing = missingModelFiles(embeddingModelsRoot());
      if (missing.length) throw new Error(`the embedding model is not installed (missing ${missing.join(', ')}): run npm run fetch-model`);
    });

    after(async () => {
      await closeSharedEmbedder();
    });

    it('scores a paraphrase higher than an unrelated sentence; the default threshold 0.8 tells them apart', async () => {
      const expected = 'You can reset your password from the account settings page.';
      const paraphrase = await scoreOf({ type: 'semantic_similarity' }, { output: 'Go to account settings to change your password.', expected });
      const unrelated = await scoreOf({ type: 'semantic_similarity' }, { output: 'Add two cups of flour and a pinch of salt.', expected });
      expect(paraphrase.score).to.be.greaterThan(unrelated.score + 0.4);
      expect(paraphrase.passed).to.equal(true);
      expect(unrelated.passed).to.equal(false);
      expect(paraphrase.reason).to.match(/^cosine similarity to the expected value 0\.\d+$/);
      for (const score of [paraphrase, unrelated]) expect(score.score).to.be.within(0, 1);
      expect((await scoreOf({ type: 'semantic_similarity', threshold: 0.95 }, { output: 'Go to account settings to change your password.', expected })).passed).to.equal(
        false,
      );
    });

    it('embeds an object expected as its JSON', async () => {
      const score = await scoreOf({ type: 'semantic_similarity', threshold: 0.5 }, { output: '{"city": "Paris", "country": "France"}', expected: { city: 'Paris', country: 'France' } });
      expect(score.score).to.be.greaterThan(0.9);
    });
  });

  describe('llm_judge (the scripted model)', () => {
    it('reads the score and reason of the judge and reports the call with its usage', async () => {
      const calls: ScorerModelCall[] = [];
      const { context } = scoringContext();
      context.recordModelCall = (call) => calls.push(call);
      const judge = scriptedJudge('{"score": 0.9, "reason": "Correct and concise."}') as ScorerConfig;
      const result = await scoreCell([judge], subject({ expected: 'Paris' }), context);
      expect(result).to.deep.equal({
        scores: { llm_judge: { score: 0.9, passed: true, reason: 'the judge scored 0.9: Correct and concise.' } },
        passed: true,
        failure: null,
      });
      expect(calls).to.have.length(1);
      expect(calls[0]!.scorer).to.equal('llm_judge');
      expect(calls[0]!.model).to.equal('scripted');
      expect(calls[0]!.usage.prompt_tokens).to.be.a('number').and.greaterThan(10);
      expect(calls[0]!.usage.completion_tokens).to.be.a('number').and.greaterThan(0);
    });

    it('reports the usage the script gives, under the scorer name', async () => {
      const { context, calls } = scoringContext();
      const judge = scriptedJudge('0.3', { name: 'tone', script: [{ text: '0.3', usage: { prompt_tokens: 120, completion_tokens: 2 } }] });
      const result = await scoreCell([judge as ScorerConfig], subject(), context);
      expect(result.scores.tone).to.deep.equal({ score: 0.3, passed: false, reason: 'the judge scored 0.3: it gave no reason' });
      expect(calls).to.deep.equal([{ scorer: 'tone', model: 'scripted', usage: { prompt_tokens: 120, completion_tokens: 2 } }]);
    });

    it('applies its threshold (default 0.5)', async () => {
      expect((await scoreOf(scriptedJudge('{"score": 0.5}'))).passed).to.equal(true);
      expect((await scoreOf(scriptedJudge('{"score": 0.9}', { threshold: 0.95 }))).passed).to.equal(false);
    });

    it('reads an answer in a fence or among words, and a numeric string score', async () => {
      expect((await scoreOf(scriptedJudge('```json\n{"score": 0.7, "reason": "ok"}\n```'))).score).to.equal(0.7);
      expect(parseJudgeAnswer('Here is my grade: {"score": "0.25", "reason": "vague"} Thanks.')).to.deep.equal({ score: 0.25, reason: 'vague' });
      expect(parseJudgeAnswer(' 1 ')).to.deep.equal({ score: 1, reason: undefined });
      expect(parseJudgeAnswer('{"score": 8, "reason": "out of 10"}')).to.equal(undefined);
      expect(parseJudgeAnswer('{"grade": 0.8}')).to.equal(undefined);
      expect(parseJudgeAnswer('Looks great!')).to.equal(undefined);
    });

    it('fails (the scorer) on an unusable answer, still reporting the call', async () => {
      const { context, calls } = scoringContext();
      const result = await scoreCell([scriptedJudge('Looks great to me!') as ScorerConfig], subject(), context);
      expect(result).to.deep.equal({
        scores: {},
        passed: false,
        failure: 'scorer \'llm_judge\' failed: the judge model answered no score from 0 to 1: "Looks great to me!"',
      });
      expect(calls).to.have.length(1);
      expect(await failureOf(scriptedJudge('{"score": 7}'))).to.contain('answered no score from 0 to 1');
    });

    it('fails (the scorer) when the judge model cannot be called', async () => {
      const { context, calls } = scoringContext();
      const judge = { type: 'llm_judge', model: 'openai/gpt-4.1-mini', rubric: 'Is {{output}} right?' } as ScorerConfig;
      const result = await scoreCell([judge], subject(), context);
      expect(result.failure).to.equal("scorer 'llm_judge' failed: OPENAI_API_KEY is not set, so 'openai/...' models cannot be called");
      expect(calls).to.deep.equal([]);
    });

    it('fills the rubric in one pass, and appends the output to a rubric without {{output}}', () => {
      const cell = subject({ input: 'Capital of France?', expected: { city: 'Paris' } });
      const [system, user] = judgeMessages('Q: {{input}}\nA: {{ output }}\nWant: {{expected}}', cell, 'It is {{expected}}');
      expect(system!.role).to.equal('system');
      expect(system!.content).to.contain('{"score": <a number from 0 to 1>');
      expect(user).to.deep.equal({ role: 'user', content: 'Q: Capital of France?\nA: It is {{expected}}\nWant: {\n  "city": "Paris"\n}' });
      const [, plain] = judgeMessages('Is the answer polite?', subject({ expected: null }), 'Paris.');
      expect(plain!.content).to.equal('Is the answer polite?\n\nThe output to grade:\n<output>\nParis.\n</output>');
      const [, none] = judgeMessages('{{output}} vs {{expected}}', subject({ expected: null }), 'Paris.');
      expect(none!.content).to.equal('Paris. vs (no expected value)');
    });
  });

  describe('tool_called', () => {
    it('scores the fraction of the named tools the run called', async () => {
      const toolCalls = ['search', 'fetch', 'search'];
      expect(await scoreOf({ type: 'tool_called', tools: ['search', 'fetch'] }, { toolCalls })).to.deep.equal({
        score: 1,
        passed: true,
        reason: 'the run called search, fetch',
      });
      const half = await scoreOf({ type: 'tool_called', tools: ['search', 'calculator'] }, { toolCalls });
      expect(half).to.deep.equal({ score: 0.5, passed: false, reason: 'the run did not call calculator (score 0.5); it called search, fetch, search' });
      expect((await scoreOf({ type: 'tool_called', tools: ['search', 'calculator'], threshold: 0.5 }, { toolCalls })).passed).to.equal(true);
      expect((await scoreOf({ type: 'tool_called', tools: ['fetch', 'fetch'] }, { toolCalls })).score).to.equal(0.5);
    });

    it('with ordered, needs the tools as a subsequence in that order', async () => {
      const toolCalls = ['search', 'fetch', 'summarize'];
      expect((await scoreOf({ type: 'tool_called', tools: ['search', 'summarize'], ordered: true }, { toolCalls })).passed).to.equal(true);
      const reversed = await scoreOf({ type: 'tool_called', tools: ['summarize', 'search'], ordered: true }, { toolCalls });
      expect(reversed).to.deep.equal({
        score: 0.5,
        passed: false,
        reason: 'the run did not call search where the order needs it (score 0.5); it called search, fetch, summarize',
      });
      expect((await scoreOf({ type: 'tool_called', tools: ['summarize', 'search'] }, { toolCalls })).passed).to.equal(true);
    });

    it('scores a run that ended without an output', async () => {
      expect((await scoreOf({ type: 'tool_called', tools: ['search'] }, { output: null, toolCalls: ['search'] })).passed).to.equal(true);
    });
  });

  describe('cost_max', () => {
    it('compares exact decimals', async () => {
      expect(await scoreOf({ type: 'cost_max', max_usd: '0.002' }, { costUsd: '0.0015' })).to.deep.equal({
        score: 1,
        passed: true,
        reason: 'the run cost 0.0015 USD, within the budget of 0.002 USD',
      });
      expect((await scoreOf({ type: 'cost_max', max_usd: 0.3 }, { costUsd: '0.3' })).passed).to.equal(true);
      expect((await scoreOf({ type: 'cost_max', max_usd: 0.3 }, { costUsd: '0.30000000000000000001' })).passed).to.equal(false);
      expect((await scoreOf({ type: 'cost_max', max_usd: '0' }, { costUsd: '0' })).passed).to.equal(true);
    });

    it('fails an unknown cost, saying so', async () => {
      expect(await scoreOf({ type: 'cost_max', max_usd: '1' }, { costUsd: null })).to.deep.equal({
        score: 0,
        passed: false,
        reason: "the run's cost is unknown (a model without a price, or no usage reported), so it cannot be held to 1 USD",
      });
    });
  });

  describe('latency_max', () => {
    it('passes at or under the limit, and fails over it or when unknown', async () => {
      expect((await scoreOf({ type: 'latency_max', max_ms: 1200 }, { latencyMs: 1200 })).passed).to.equal(true);
      expect(await scoreOf({ type: 'latency_max', max_ms: 1000 }, { latencyMs: 1200 })).to.deep.equal({
        score: 0,
        passed: false,
        reason: 'the run took 1200 ms, over the limit of 1000 ms',
      });
      expect((await scoreOf({ type: 'latency_max', max_ms: 1000 }, { latencyMs: null })).reason).to.equal(
        "the run's latency is unknown, so it cannot be held to 1000 ms",
      );
    });
  });

  describe('scoreCell', () => {
    it('passes an empty list', async () => {
      expect(await scoreCell([], subject(), scoringContext().context)).to.deep.equal({ scores: {}, passed: true, failure: null });
    });

    it('passes only when every scorer reaches its threshold', async () => {
      const scorers = [{ type: 'exact' }, { type: 'latency_max', max_ms: 1000 }] as ScorerConfig[];
      const result = await scoreCell(scorers, subject({ output: 'Paris', expected: 'Paris', latencyMs: 5000 }), scoringContext().context);
      expect(result.passed).to.equal(false);
      expect(result.failure).to.equal(null);
      expect(Object.keys(result.scores)).to.deep.equal(['exact', 'latency_max']);
      expect(result.scores.exact!.passed).to.equal(true);
    });

    it('scores 0 on every output-reading scorer when the run ended without an output', async () => {
      const scorers = [
        { type: 'exact' },
        { type: 'regex', pattern: 'a' },
        scriptedJudge('{"score": 1}'),
        { type: 'latency_max', max_ms: 5000 },
      ] as ScorerConfig[];
      const { context, calls } = scoringContext();
      const result = await scoreCell(scorers, subject({ output: null, expected: 'Paris' }), context);
      expect(result.failure).to.equal(null);
      expect(result.passed).to.equal(false);
      for (const name of ['exact', 'regex', 'llm_judge']) {
        expect(result.scores[name]).to.deep.equal({ score: 0, passed: false, reason: 'the run ended without an output' });
      }
      expect(result.scores.latency_max!.passed).to.equal(true);
      expect(calls).to.deep.equal([]);
    });

    it('isolates a scorer that breaks: the others still score, the cell fails with a reason naming it', async () => {
      const scorers = [
        { type: 'exact' },
        scriptedJudge('I refuse to grade this.', { name: 'judge' }),
        { type: 'regex', pattern: '(a)\\1', name: 'stored_long_ago' },
        { type: 'contains', value: 'Par' },
      ] as ScorerConfig[];
      const result = await scoreCell(scorers, subject({ output: 'Paris', expected: 'Paris' }), scoringContext().context);
      expect(Object.keys(result.scores)).to.deep.equal(['exact', 'contains']);
      expect(result.passed).to.equal(false);
      expect(result.failure).to.equal(
        "scorer 'judge' failed: the judge model answered no score from 0 to 1: \"I refuse to grade this.\"; " +
          "scorer 'stored_long_ago' failed: its config is invalid: pattern uses the backreference \\1, which no linear-time engine runs",
      );
    });

    it('rejects when cancelled, rather than calling it a failure', async () => {
      const controller = new AbortController();
      const slowJudge = scriptedJudge('', { script: [{ text: 'one two three {"score": 1}', delay_ms: 10_000 }] }) as ScorerConfig;
      const scoring = scoreCell([{ type: 'exact' } as ScorerConfig, slowJudge], subject({ expected: 'Paris' }), scoringContext(controller.signal).context);
      setTimeout(() => controller.abort(new Error('cancelled by the test')), 50);
      const started = Date.now();
      const error = await scoring.then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(error?.message).to.equal('cancelled by the test');
      expect(Date.now() - started).to.be.lessThan(5000);

      const aborted = AbortSignal.abort(new Error('already cancelled'));
      const early = await scoreCell([{ type: 'exact' } as ScorerConfig], subject(), scoringContext(aborted).context).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(early?.message).to.equal('already cancelled');
    });
  });
});
