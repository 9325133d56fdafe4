import { expect } from 'chai';
import { applyGuardrails, guardrailConfigProblems } from '../activities/guardrails/index.js';
import { guardrail, redacted, trips } from './support/guardrail-fixtures.js';

describe('guardrails engine: keyword', () => {
  it('matches whole words only, in any script', async () => {
    const ass = { keywords: ['ass'] };
    for (const text of ['class', 'assume', 'bass guitar', 'ass_hat', 'ass2', 'Assam']) expect(await trips('keyword', ass, text), text).to.equal(false);
    for (const text of ['ass', 'what an ass.', '(ass)', 'ass-backwards', '"Ass"']) expect(await trips('keyword', ass, text), text).to.equal(true);
    // Non-ASCII letters are word characters too: `\b` would see a boundary inside `künstler`.
    expect(await trips('keyword', { keywords: ['kün'] }, 'künstler')).to.equal(false);
    expect(await trips('keyword', { keywords: ['stler'] }, 'künstler')).to.equal(false);
    expect(await trips('keyword', { keywords: ['café'] }, 'un café noir')).to.equal(true);
    expect(await trips('keyword', { keywords: ['кот'] }, 'мой кот спит')).to.equal(true);
    expect(await trips('keyword', { keywords: ['кот'] }, 'который')).to.equal(false);
  });

  it('ignores case', async () => {
    expect(await redacted('keyword', { keywords: ['Secret Project'] }, 'the SECRET project and the secret PROJECT')).to.equal(
      'the [REDACTED] and the [REDACTED]',
    );
    expect(await trips('keyword', { keywords: ['ÉTÉ'] }, 'un été chaud')).to.equal(true);
  });

  it('matches the words of a phrase across any whitespace, but not across other characters', async () => {
    const phrase = { keywords: ['new york'] };
    expect(await redacted('keyword', phrase, 'in New\n  York\ttoday')).to.equal('in [REDACTED]\ttoday');
    expect(await trips('keyword', phrase, 'new-york')).to.equal(false);
    expect(await trips('keyword', phrase, 'newyork')).to.equal(false);
  });

  it('takes keywords literally, regex syntax included', async () => {
    expect(await redacted('keyword', { keywords: ['c++', 'a.b'] }, 'c++ and a.b but not axb')).to.equal('[REDACTED] and [REDACTED] but not axb');
  });

  it('prefers the longer keyword where two start together, and names the keywords found', async () => {
    const outcome = await applyGuardrails(
      [guardrail('keyword', { keywords: ['new york', 'new york city', 'boston'] }, { action: 'redact' })],
      'From New York City to Boston.',
      'output',
    );
    expect(outcome.text).to.equal('From [REDACTED] to [REDACTED].');
    expect(outcome.trips[0]!.detail).to.equal('text contains the keyword(s) new york city, boston');
  });
});

describe('guardrails engine: max_length', () => {
  it('counts Unicode code points, not UTF-16 units', async () => {
    expect(await trips('max_length', { maxChars: 3 }, '😀😀😀')).to.equal(false);
    expect(await trips('max_length', { maxChars: 3 }, '😀😀😀😀')).to.equal(true);
    expect(await trips('max_length', { maxChars: 1 }, '')).to.equal(false);
  });

  it('redacts by truncating to maxChars, never splitting a character', async () => {
    expect(await redacted('max_length', { maxChars: 2 }, '😀😀😀')).to.equal('😀😀');
    expect(await redacted('max_length', { maxChars: 4 }, 'abcdef')).to.equal('abcd');
  });

  it('says how long the text is', async () => {
    const outcome = await applyGuardrails([guardrail('max_length', { maxChars: 4 })], 'abcdef', 'input');
    expect(outcome.blocked!.detail).to.equal('text has 6 characters, more than the limit of 4');
  });
});

describe('guardrails engine: json_schema', () => {
  const schema = {
    type: 'object',
    required: ['answer', 'confidence'],
    additionalProperties: false,
    properties: { answer: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 }, email: { format: 'email' } },
  };

  async function detail(text: string): Promise<string | undefined> {
    const outcome = await applyGuardrails([guardrail('json_schema', { schema })], text, 'output');
    return outcome.blocked?.detail;
  }

  it('passes JSON that matches the schema', async () => {
    expect(await detail('{"answer": "42", "confidence": 0.9}')).to.equal(undefined);
    expect(await detail(' {"answer": "42", "confidence": 1, "email": "a@example.com"}\n')).to.equal(undefined);
  });

  it('trips on text that is not JSON, without quoting it', async () => {
    for (const text of ['The answer is 42', '{"answer": "42",}', '```json\n{"answer": "42", "confidence": 1}\n```', '']) {
      expect(await detail(text), text).to.equal('text is not valid JSON');
    }
  });

  it("trips on JSON failing the schema, with ajv's error text", async () => {
    expect(await detail('{"answer": 42}')).to.equal(
      "JSON does not match the schema: json must have required property 'confidence', json/answer must be string",
    );
    expect(await detail('{"answer": "x", "confidence": 2}')).to.equal('JSON does not match the schema: json/confidence must be <= 1');
    expect(await detail('{"answer": "x", "confidence": 1, "email": "nope"}')).to.equal(
      'JSON does not match the schema: json/email must match format "email"',
    );
    expect(await detail('[1, 2]')).to.equal('JSON does not match the schema: json must be object');
  });

  it('redacts the whole text', async () => {
    expect(await redacted('json_schema', { schema }, 'not json')).to.equal('[REDACTED]');
  });

  it('refuses schemas that do not compile, misspelt keywords, unknown formats and unsafe patterns', () => {
    const problem = (schema: Record<string, unknown>) => guardrailConfigProblems('json_schema', { schema }).map((p) => `${p.field} ${p.message}`);
    expect(problem({ type: 'nope' })[0]).to.match(/^config\.schema is not a usable JSON Schema: schema is invalid/);
    expect(problem({ type: 'object', requird: ['a'] })).to.deep.equal(['config.schema is not a usable JSON Schema: strict mode: unknown keyword: "requird"']);
    expect(problem({ type: 'string', format: 'colour' })[0]).to.match(/unknown format "colour"/);
    expect(problem({ $ref: 'https://example.com/schema.json' })[0]).to.match(/can't resolve reference/);
    expect(problem({ type: 'string', pattern: '^(a)\\1$' })[0]).to.match(/pattern "\^\(a\)\\\\1\$" uses the backreference \\1/);
    expect(problem({ patternProperties: { '(?=x)': {} } })[0]).to.match(/uses the lookahead/);
    expect(problem({ type: 'string', pattern: '^(a+)+$' })).to.deep.equal([]); // linear time on the linear-time engine
    expect(problem({ properties: { a: { type: 'string', pattern: '^[a-z]+$' } }, required: ['a'] })).to.deep.equal([]);
  });
});
