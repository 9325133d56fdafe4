import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { stream, streamedText } from './support/sse.js';

/** For each kind: a config, and a text that trips it. */
const KINDS: Record<string, { config: Record<string, unknown>; text: string; redacted: (text: string) => boolean }> = {
  pii: { config: { entities: ['email'] }, text: 'mail me at jo@example.com please', redacted: (t) => t.includes('[EMAIL]') && !t.includes('jo@example.com') },
  regex: { config: { pattern: 'secret-\\d+' }, text: 'the code is secret-42 ok', redacted: (t) => !t.includes('secret-42') },
  keyword: { config: { keywords: ['forbidden'] }, text: 'this is Forbidden talk', redacted: (t) => !/forbidden/i.test(t) },
  max_length: { config: { maxChars: 10 }, text: 'this text is longer than ten', redacted: (t) => [...t].length <= 10 },
  json_schema: { config: { schema: { type: 'object' } }, text: 'not json at all', redacted: (t) => t === '[REDACTED]' },
  semantic: {
    config: { questions: { rude: 'The text is rude.' }, model: 'scripted', script: [{ text: '{"rude": 0.95}' }] },
    text: 'you are a fool',
    redacted: (t) => t === '[REDACTED]',
  },
};

describe('guardrails', () => {
  let key: string;
  beforeEach(async () => {
    ({ key } = await newTenant('guardrails'));
  });

  describe('API', () => {
    it('creates with defaults (201), replaces by name (200), toggles, lists and deletes', async () => {
      const created = await call('POST', '/v1/guardrails', { key, body: { name: 'no-secrets', kind: 'regex', config: { pattern: 'secret' } } });
      expect(created.status).to.equal(201);
      expect(created.body.guardrail).to.include({ name: 'no-secrets', kind: 'regex', target: 'both', action: 'block', enabled: true });
      const replaced = await call('POST', '/v1/guardrails', { key, body: { name: 'no-secrets', kind: 'keyword', action: 'warn', target: 'output', config: { keywords: ['x'] } } });
      expect(replaced.status).to.equal(200);
      expect(replaced.body.guardrail).to.include({ id: created.body.guardrail.id, kind: 'keyword', action: 'warn', target: 'output' });

      const toggled = await call('PATCH', '/v1/guardrails/no-secrets', { key, body: { enabled: false } });
      expect(toggled.body).to.deep.equal({ name: 'no-secrets', enabled: false });
      expect((await call('GET', '/v1/guardrails', { key })).body.guardrails[0].enabled).to.equal(false);
      expect((await call('PATCH', '/v1/guardrails/none', { key, body: { enabled: true } })).status).to.equal(404);
      expect((await call('PATCH', '/v1/guardrails/no-secrets', { key, body: {} })).status).to.equal(400);

      expect((await call('DELETE', '/v1/guardrails/no-secrets', { key })).body).to.deep.include({ deleted: true });
      expect((await call('DELETE', '/v1/guardrails/no-secrets', { key })).status).to.equal(404);
    });

    it('addresses a guardrail by id first, then by name (db/refs.ts)', async () => {
      const first = (await call('POST', '/v1/guardrails', { key, body: { name: 'first', kind: 'regex', config: { pattern: 'x' } } })).body.guardrail;
      // A second guardrail named like the first one's id: the id still reaches the first.
      await call('POST', '/v1/guardrails', { key, body: { name: first.id, kind: 'regex', config: { pattern: 'y' } } });
      expect((await call('PATCH', `/v1/guardrails/${first.id}`, { key, body: { enabled: false } })).body).to.deep.equal({ name: 'first', enabled: false });
      expect((await call('PATCH', '/v1/guardrails/first', { key, body: { enabled: true } })).body).to.deep.equal({ name: 'first', enabled: true });
    });

    it('answers 400 to an unknown kind, target or action, and to a config its kind rejects', async () => {
      const bad = [
        { name: 'g', kind: 'vibes' },
        { name: 'g', kind: 'regex', config: { pattern: 'x' }, target: 'sideways' },
        { name: 'g', kind: 'regex', config: { pattern: 'x' }, action: 'explode' },
        { name: 'g', kind: 'regex', config: {} },
        { name: 'g', kind: 'regex', config: { pattern: '(a)\\1' } },
        { name: 'g', kind: 'regex', config: { pattern: '([' } },
        { name: 'g', kind: 'keyword', config: { keywords: [] } },
        { name: 'g', kind: 'max_length', config: { maxChars: 0 } },
        { name: 'g', kind: 'json_schema', config: { schema: { type: 'nonsense' } } },
        { name: 'g', kind: 'pii', config: { entities: ['dna'] } },
        { name: 'g', kind: 'semantic', config: { questions: {} } },
      ];
      for (const body of bad) {
        const response = await call('POST', '/v1/guardrails', { key, body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.body.error.fields, JSON.stringify(body)).to.not.be.empty;
      }
      expect((await call('GET', '/v1/guardrails', { key })).body.guardrails).to.deep.equal([]);
    });

    it('keeps guardrails to their tenant', async () => {
      await call('POST', '/v1/guardrails', { key, body: { name: 'mine', kind: 'max_length', config: { maxChars: 5 } } });
      const other = await newTenant('guardrails-other');
      expect((await call('GET', '/v1/guardrails', { key: other.key })).body.guardrails).to.deep.equal([]);
      expect((await call('PATCH', '/v1/guardrails/mine', { key: other.key, body: { enabled: false } })).status).to.equal(404);
      expect((await call('DELETE', '/v1/guardrails/mine', { key: other.key })).status).to.equal(404);
      // Nor do they apply to the other tenant's runs.
      const agentId = await publishAgent(other.key, 'free', scriptedGraph([{ text: 'a long answer indeed' }]));
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: other.key, body: { input: 'a long question indeed' } });
      expect(response.frames.at(-1)!.event).to.equal('run.completed');
    });
  });

  describe('on runs: every kind × action × target', () => {
    for (const [kind, { config, text, redacted }] of Object.entries(KINDS)) {
      for (const action of ['block', 'redact', 'warn'] as const) {
        for (const target of ['input', 'output', 'both'] as const) {
          it(`${kind} / ${action} / ${target}`, async () => {
            await call('POST', '/v1/guardrails', { key, body: { name: `g-${kind}`, kind, action, target, config } });
            const agentId = await publishAgent(key, 'guarded', scriptedGraph([{ text }]));
            const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: text } });
            const runId = response.frames[0]!.data.run_id;
            const { run } = (await call('GET', `/v1/runs/${runId}`, { key })).body;
            const trips = response.frames.filter((f) => f.event === 'guardrail.triggered').map((f) => f.data);
            for (const trip of trips) expect(trip).to.include({ name: `g-${kind}`, kind, action });
            expect(run.guardrail_trips.map((t: { target: string }) => t.target)).to.deep.equal(trips.map((t) => t.target));
            const checksInput = target !== 'output';
            const checksOutput = target !== 'input';
            const deltas = streamedText(response.frames);

            if (action === 'block') {
              expect(run.status).to.equal('failed');
              expect(run.error.code).to.equal('guardrail_blocked');
              expect(run.error.message).to.include(`g-${kind}`);
              expect(trips.map((t) => t.target)).to.deep.equal([checksInput ? 'input' : 'output']);
              // A blocked output never reached the client, not even in pieces.
              expect(deltas).to.equal('');
              return;
            }
            expect(run.status).to.equal('completed');
            expect(trips.map((t) => t.target)).to.deep.equal([...(checksInput ? ['input'] : []), ...(checksOutput ? ['output'] : [])]);
            if (action === 'redact' && checksOutput) {
              expect(redacted(run.output), run.output).to.equal(true);
              expect(deltas).to.equal(run.output);
            } else {
              expect(run.output).to.equal(text);
            }
          });
        }
      }
    }
  });

  describe('on runs', () => {
    it('never streams an unredacted span of a redacted output', async () => {
      await call('POST', '/v1/guardrails', { key, body: { name: 'cards', kind: 'pii', action: 'redact', target: 'output', config: { entities: ['credit_card'] } } });
      const answer = 'Your card 4111 1111 1111 1111 is on file, and 1234 5678 9012 3456 is not a card.';
      const agentId = await publishAgent(key, 'cards', scriptedGraph([{ text: answer, delay_ms: 200 }]));
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'my card?' } });
      const streamed = response.frames.filter((f) => f.event === 'message.delta').map((f) => f.data.delta).join('');
      expect(streamed).to.equal('Your card [CREDIT_CARD] is on file, and 1234 5678 9012 3456 is not a card.');
      expect(JSON.stringify(response.frames)).to.not.include('4111');
      const completed = response.frames.find((f) => f.event === 'message.completed')!;
      expect(completed.data.text).to.equal(streamed);
    });

    it('redacts the input the model sees', async () => {
      await call('POST', '/v1/guardrails', { key, body: { name: 'emails', kind: 'pii', action: 'redact', target: 'input' } });
      const agentId = await publishAgent(key, 'echo', { nodes: [{ id: 'main', model: 'ollama/echo' }] });
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'write to jo@example.com' } });
      expect(response.frames.at(-1)!.data.output).to.equal('saw user; last: "write to [EMAIL]"');
    });

    it('applies only enabled guardrails, and only those the graph lists when it lists any', async () => {
      await call('POST', '/v1/guardrails', { key, body: { name: 'short', kind: 'max_length', action: 'block', config: { maxChars: 5 } } });
      await call('POST', '/v1/guardrails', { key, body: { name: 'loud', kind: 'keyword', action: 'warn', config: { keywords: ['hello'] } } });
      const listed = await publishAgent(key, 'listed', { ...scriptedGraph([{ text: 'hello there' }]), guardrails: ['loud'] });
      const first = await stream('POST', `/v1/agents/${listed}/runs`, { key, body: { input: 'hello world' } });
      expect(first.frames.at(-1)!.event).to.equal('run.completed');
      expect(first.frames.filter((f) => f.event === 'guardrail.triggered').map((f) => f.data.name)).to.deep.equal(['loud', 'loud']);

      await call('PATCH', '/v1/guardrails/short', { key, body: { enabled: false } });
      const all = await publishAgent(key, 'all', scriptedGraph([{ text: 'hello there' }]));
      const second = await stream('POST', `/v1/agents/${all}/runs`, { key, body: { input: 'hello world' } });
      expect(second.frames.at(-1)!.event).to.equal('run.completed');

      const unknown = await publishAgent(key, 'unknown', { ...scriptedGraph([{ text: 'x' }]), guardrails: ['nope'] });
      const third = await stream('POST', `/v1/agents/${unknown}/runs`, { key, body: { input: 'x' } });
      expect(third.frames.at(-1)!.data.error.code).to.equal('invalid_graph');
    });

    it('counts the decision model’s tokens in the run’s usage and cost, blocked or not', async () => {
      const agentId = await publishAgent(key, 'costed', scriptedGraph([{ text: 'a fine answer', usage: { prompt_tokens: 1000, completion_tokens: 200 } }]));
      for (const [score, status] of [['0.1', 'completed'], ['0.9', 'failed']] as const) {
        await call('POST', '/v1/guardrails', {
          key,
          body: { name: 'rude', kind: 'semantic', target: 'output', config: { questions: { rude: 'The text is rude.' }, model: 'scripted', script: [{ text: `{"rude": ${score}}`, usage: { prompt_tokens: 100, completion_tokens: 10 } }] } },
        });
        const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'hi' } });
        const { run } = (await call('GET', `/v1/runs/${response.frames[0]!.data.run_id}`, { key })).body;
        expect(run.status).to.equal(status);
        // 1100 prompt tokens at $1.25/M and 210 completion tokens at $2.50/M.
        expect(run.usage).to.include({ prompt_tokens: 1100, completion_tokens: 210, total_tokens: 1310, cost_usd: '0.0019' });
      }
    });

    it('decides semantic guardrails by threshold, and by failClosed when the decision model fails', async () => {
      const semantic = (name: string, score: string, extra: Record<string, unknown> = {}) =>
        call('POST', '/v1/guardrails', {
          key,
          body: { name, kind: 'semantic', target: 'output', config: { questions: { medical: { instructions: 'The text gives medical advice.', threshold: 0.8 } }, model: 'scripted', script: [{ text: score }], ...extra } },
        });
      const agentId = await publishAgent(key, 'doctor', scriptedGraph([{ text: 'take two aspirin' }]));
      const runOnce = async () => (await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'headache' } })).frames.at(-1)!;

      await semantic('medical', '{"medical": 0.79}');
      expect((await runOnce()).event).to.equal('run.completed');
      await semantic('medical', '{"medical": 0.8}');
      expect((await runOnce()).data.error.code).to.equal('guardrail_blocked');
      await semantic('medical', 'I cannot answer that', { failClosed: false });
      expect((await runOnce()).event).to.equal('run.completed');
      await semantic('medical', 'I cannot answer that', { failClosed: true });
      expect((await runOnce()).data.error.code).to.equal('guardrail_blocked');
    });
  });
});
