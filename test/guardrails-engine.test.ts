import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import {
  applyGuardrails,
  GUARDRAIL_KINDS,
  GuardrailConfigError,
  guardrailConfigProblems,
  guardrailConfigSchemas,
  type Guardrail,
  type GuardrailAction,
  type GuardrailKind,
  type GuardrailTarget,
} from '../activities/guardrails/index.js';
import { failure } from './support/failure.js';
import { guardrail, scriptedSemantic } from './support/guardrail-fixtures.js';

/** Per kind: a guardrail and a text it trips on (with the text `redact` makes of it), and a text it lets pass. */
interface KindCase {
  tripping: { config: Record<string, unknown>; text: string; redacted: string };
  passing: { config: Record<string, unknown>; text: string };
}

const semanticQuestions = { off_topic: 'The text is not about cooking.' };
const semanticConfig = (score: number) => ({ questions: semanticQuestions, model: 'scripted', script: [{ text: `{"off_topic": ${score}}` }] });

const KIND_CASES: Record<GuardrailKind, KindCase> = {
  pii: {
    tripping: { config: {}, text: 'write to ann@example.com today', redacted: 'write to [EMAIL] today' },
    passing: { config: {}, text: 'write to Ann today' },
  },
  regex: {
    tripping: { config: { pattern: 'secret-\\d+' }, text: 'codes: secret-42 and secret-7.', redacted: 'codes: [REDACTED] and [REDACTED].' },
    passing: { config: { pattern: 'secret-\\d+' }, text: 'codes: secret-x' },
  },
  keyword: {
    tripping: { config: { keywords: ['banana'] }, text: 'I like Banana bread', redacted: 'I like [REDACTED] bread' },
    passing: { config: { keywords: ['banana'] }, text: 'I like bananas' },
  },
  max_length: {
    tripping: { config: { maxChars: 5 }, text: 'abcdefgh', redacted: 'abcde' },
    passing: { config: { maxChars: 5 }, text: 'abcde' },
  },
  json_schema: {
    tripping: { config: { schema: { type: 'object', required: ['a'] } }, text: '{"b": 1}', redacted: '[REDACTED]' },
    passing: { config: { schema: { type: 'object', required: ['a'] } }, text: '{"a": 1}' },
  },
  semantic: {
    tripping: { config: semanticConfig(0.9), text: 'Who won the match?', redacted: '[REDACTED]' },
    passing: { config: semanticConfig(0.1), text: 'How long do I boil an egg?' },
  },
};

const ACTIONS: GuardrailAction[] = ['block', 'redact', 'warn'];
const TARGETS: GuardrailTarget[] = ['input', 'output', 'both'];

describe('guardrails engine: evaluation', () => {
  for (const kind of GUARDRAIL_KINDS) {
    const { tripping, passing } = KIND_CASES[kind];

    describe(kind, () => {
      for (const action of ACTIONS) {
        it(`${action}: records the trip and ${action === 'redact' ? 'redacts the text' : action === 'block' ? 'blocks' : 'keeps the text'}`, async () => {
          const outcome = await applyGuardrails([guardrail(kind, tripping.config, { name: 'g1', action })], tripping.text, 'output');
          expect(outcome.trips).to.have.length(1);
          const [trip] = outcome.trips;
          expect(trip).to.include({ name: 'g1', kind, action, target: 'output' });
          expect(trip!.detail).to.be.a('string').and.not.be.empty;
          expect(outcome.blocked).to.equal(action === 'block' ? trip : null);
          expect(outcome.text).to.equal(action === 'redact' ? tripping.redacted : tripping.text);
        });
      }

      it('lets a passing text through unchanged', async () => {
        for (const action of ACTIONS) {
          const outcome = await applyGuardrails([guardrail(kind, passing.config, { action })], passing.text, 'input');
          expect(outcome).to.deep.include({ text: passing.text, blocked: null, trips: [] });
        }
      });

      it('applies only to its target (`both` to input and output)', async () => {
        for (const target of TARGETS) {
          for (const evaluated of ['input', 'output'] as const) {
            const outcome = await applyGuardrails([guardrail(kind, tripping.config, { target, action: 'warn' })], tripping.text, evaluated);
            const applies = target === 'both' || target === evaluated;
            expect(outcome.trips.map((trip) => trip.target), `${target} guardrail on ${evaluated}`).to.deep.equal(applies ? [evaluated] : []);
          }
        }
      });
    });
  }

  it('runs guardrails in order; later ones see earlier redactions', async () => {
    const guardrails: Guardrail[] = [
      guardrail('pii', {}, { name: 'pii', action: 'redact' }),
      // Matches only once the address has become the label `[EMAIL]`.
      guardrail('keyword', { keywords: ['email'] }, { name: 'label-watch', action: 'warn' }),
      guardrail('regex', { pattern: 'ann' }, { name: 'name', action: 'redact', target: 'output' }),
      guardrail('regex', { pattern: 'example' }, { name: 'input-only', action: 'block', target: 'input' }),
      guardrail('max_length', { maxChars: 20 }, { name: 'length', action: 'redact' }),
    ];
    const outcome = await applyGuardrails(guardrails, 'Hi ann, mail ann@example.com', 'output');
    expect(outcome.trips.map((trip) => [trip.name, trip.action])).to.deep.equal([
      ['pii', 'redact'],
      ['label-watch', 'warn'],
      ['name', 'redact'],
      ['length', 'redact'],
    ]);
    expect(outcome.trips[1]!.detail).to.include('email');
    expect(outcome.text).to.equal('Hi [REDACTED], mail ');
    expect(outcome.blocked).to.equal(null);
  });

  it('stops at the first block, keeping the trips and redactions before it', async () => {
    const guardrails: Guardrail[] = [
      guardrail('keyword', { keywords: ['password'] }, { name: 'warn-first', action: 'warn' }),
      guardrail('pii', { entities: ['us_ssn'] }, { name: 'ssn', action: 'redact' }),
      guardrail('max_length', { maxChars: 10 }, { name: 'too-long', action: 'block' }),
      guardrail('regex', { pattern: 'password' }, { name: 'never-reached', action: 'block' }),
      scriptedSemantic({ q: 'anything' }, '{"q": 1}', {}, { name: 'never-asked', action: 'block' }),
    ];
    const outcome = await applyGuardrails(guardrails, 'my password is 123-45-6789', 'input');
    expect(outcome.trips.map((trip) => trip.name)).to.deep.equal(['warn-first', 'ssn', 'too-long']);
    expect(outcome.blocked).to.equal(outcome.trips[2]);
    expect(outcome.blocked!.detail).to.equal('text has 23 characters, more than the limit of 10');
    expect(outcome.text).to.equal('my password is [US_SSN]');
    expect(outcome.decisionModelCalls).to.deep.equal([]);
  });

  it('returns the text as is when there are no guardrails, or none for the target', async () => {
    expect(await applyGuardrails([], 'hello', 'input')).to.deep.equal({ text: 'hello', blocked: null, trips: [], decisionModelCalls: [] });
    const outputOnly = [guardrail('keyword', { keywords: ['hello'] }, { target: 'output' })];
    expect(await applyGuardrails(outputOnly, 'hello', 'input')).to.deep.include({ text: 'hello', blocked: null, trips: [] });
  });

  it('throws GuardrailConfigError for a stored config the API would refuse', async () => {
    const unsafe = guardrail('regex', { pattern: '(a)\\1' }, { name: 'legacy' });
    const error = await failure(applyGuardrails([unsafe], 'aaaa', 'input'));
    expect(error).to.be.instanceOf(GuardrailConfigError);
    expect((error as GuardrailConfigError).guardrail).to.equal('legacy');
    expect((error as GuardrailConfigError).problems[0]!.field).to.equal('config.pattern');

    const badAction = guardrail('keyword', { keywords: ['x'] }, { action: 'explode' as GuardrailAction });
    expect(await failure(applyGuardrails([badAction], 'x', 'input'))).to.be.instanceOf(GuardrailConfigError);
    // Even when the text's target would have skipped it: a typo must not switch a guardrail off silently.
    const badTarget = guardrail('keyword', { keywords: ['x'] }, { target: 'inputs' as GuardrailTarget });
    const error2 = (await failure(applyGuardrails([badTarget], 'x', 'input'))) as GuardrailConfigError;
    expect(error2.problems).to.deep.equal([{ field: 'target', message: 'must be one of input, output, both' }]);
  });

  it('rejects with the reason when the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled by test'));
    const error = await failure(applyGuardrails([guardrail('keyword', { keywords: ['x'] })], 'x', 'input', { signal: controller.signal }));
    expect(error.message).to.equal('cancelled by test');
  });
});

describe('guardrails engine: config schemas and problems', () => {
  // As api/validation.ts compiles request bodies: strict, with defaults and formats.
  const ajv = addFormats.default(new Ajv2020({ allErrors: true, strict: true, useDefaults: true }));

  it('has a schema per kind that compiles under ajv strict mode and accepts the documented configs', () => {
    const valid: Record<GuardrailKind, Array<Record<string, unknown>>> = {
      pii: [{}, { entities: ['email', 'iban'], redaction: 'mask' }],
      regex: [{ pattern: 'a+b' }, { pattern: '^x$', flags: 'imsu' }],
      keyword: [{ keywords: ['a', 'two words'] }],
      max_length: [{ maxChars: 1 }],
      json_schema: [{ schema: { type: 'object' } }],
      semantic: [
        { questions: { a: 'statement', b: { instructions: 'other', threshold: 0.2 } }, threshold: 0.5, context: 'c', failClosed: true, model: 'openai/gpt-4.1-mini' },
        { questions: { a: 'x' }, model: 'scripted', script: [{ text: '{"a": 0}', usage: null, delay_ms: 5 }] },
      ],
    };
    for (const kind of GUARDRAIL_KINDS) {
      const validate = ajv.compile(guardrailConfigSchemas[kind]);
      for (const config of valid[kind]) {
        const copy = structuredClone(config);
        expect(validate(copy), `${kind} ${JSON.stringify(config)}: ${JSON.stringify(validate.errors)}`).to.equal(true);
        expect(copy, 'no defaults are written into a config').to.deep.equal(config);
      }
      expect(validate({ ...valid[kind][0], extra: true }), `${kind} refuses unknown fields`).to.equal(false);
    }
  });

  it('names the failing field the way request validation does', () => {
    expect(guardrailConfigProblems('regex', {})).to.deep.equal([{ field: 'config.pattern', message: 'is required' }]);
    expect(guardrailConfigProblems('regex', { pattern: 'a', flagz: 'i' })).to.deep.equal([{ field: 'config.flagz', message: 'unknown field' }]);
    expect(guardrailConfigProblems('keyword', { keywords: ['ok', ''] })).to.deep.equal([
      { field: 'config.keywords.1', message: 'must NOT have fewer than 1 characters' },
    ]);
    expect(guardrailConfigProblems('keyword', { keywords: ['ok', '   '] })).to.deep.equal([
      { field: 'config.keywords.1', message: 'has no characters besides whitespace' },
    ]);
    expect(guardrailConfigProblems('keyword', { keywords: [] })[0]!.field).to.equal('config.keywords');
    expect(guardrailConfigProblems('keyword', { keywords: Array(501).fill('x') })[0]!.field).to.equal('config.keywords');
    expect(guardrailConfigProblems('keyword', { keywords: ['x'.repeat(201)] })[0]!.field).to.equal('config.keywords.0');
    expect(guardrailConfigProblems('max_length', { maxChars: 0 })).to.deep.equal([{ field: 'config.maxChars', message: 'must be >= 1' }]);
    expect(guardrailConfigProblems('max_length', { maxChars: 2.5 })).to.deep.equal([{ field: 'config.maxChars', message: 'must be integer' }]);
    expect(guardrailConfigProblems('pii', { entities: ['email', 'passport'] })[0]!.field).to.equal('config.entities.1');
    expect(guardrailConfigProblems('pii', { redaction: 'hash' })[0]!.field).to.equal('config.redaction');
    expect(guardrailConfigProblems('json_schema', { schema: 'string' })[0]!.field).to.equal('config.schema');
    expect(guardrailConfigProblems('nonsense' as GuardrailKind, {})).to.deep.equal([
      { field: 'kind', message: 'must be one of pii, regex, keyword, max_length, json_schema, semantic' },
    ]);
  });

  it('finds no problem in the configs used by these tests', () => {
    for (const kind of GUARDRAIL_KINDS) {
      expect(guardrailConfigProblems(kind, KIND_CASES[kind].tripping.config), kind).to.deep.equal([]);
      expect(guardrailConfigProblems(kind, KIND_CASES[kind].passing.config), kind).to.deep.equal([]);
    }
  });
});
