import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { createSuite } from './support/evals.js';
import { stream } from './support/sse.js';

/** Patterns the linear-time engine cannot run, and the words that say why. */
const UNRUNNABLE: Array<[pattern: string, why: RegExp]> = [
  ['(a*)\\1b', /uses the backreference \\1/],
  ['(?<q>a)\\k<q>', /uses the backreference \\k<q>/],
  ['(?:(?!END).)*END', /uses the lookahead \(\?!…\)/],
  ['a(?=b)', /uses the lookahead \(\?=…\)/],
];

/** The one field a 400 names, and its message. */
function onlyField(response: { status: number; body: any }): { field: string; message: string } {
  expect(response.status, JSON.stringify(response.body)).to.equal(400);
  expect(response.body.error.fields).to.have.length(1);
  return response.body.error.fields[0];
}

describe('regex: patterns the linear-time engine cannot run are refused when saved', () => {
  let key: string;
  let agentId: string;
  before(async () => {
    ({ key } = await newTenant('regex-api'));
    agentId = await publishAgent(key, 'regex-api', scriptedGraph([{ text: 'ok' }]));
  });

  for (const [pattern, why] of UNRUNNABLE) {
    describe(`/${pattern}/`, () => {
      it('regex guardrail: 400 naming body.config.pattern', async () => {
        const field = onlyField(await call('POST', '/v1/guardrails', { key, body: { name: 'g', kind: 'regex', config: { pattern } } }));
        expect(field.field).to.equal('body.config.pattern');
        expect(field.message).to.match(why);
      });

      it('json_schema guardrail: 400 naming body.config.schema', async () => {
        const schema = { type: 'object', properties: { answer: { type: 'string', pattern } } };
        const field = onlyField(await call('POST', '/v1/guardrails', { key, body: { name: 'g', kind: 'json_schema', config: { schema } } }));
        expect(field.field).to.equal('body.config.schema');
        expect(field.message).to.match(why);
      });

      it("http tool: 400 naming body.http, whose message names the arguments_schema's pattern", async () => {
        const http = { method: 'GET', url: 'https://api.example.com/search', arguments_schema: { type: 'object', properties: { q: { type: 'string', pattern } } } };
        const field = onlyField(await call('POST', '/v1/tools', { key, body: { name: 'search', kind: 'http', http } }));
        expect(field.field).to.equal('body.http');
        expect(field.message).to.contain("arguments_schema is not a usable JSON Schema: pattern");
        expect(field.message).to.match(why);
      });

      it('suite and case scorers: 400 naming the scorer field', async () => {
        const suite = onlyField(await call('POST', '/v1/evals/suites', { key, body: { agent: agentId, name: 'refused', scorers: [{ type: 'regex', pattern }] } }));
        expect(suite.field).to.equal('body.scorers[0].pattern');
        expect(suite.message).to.match(why);
        const schemaScorer = onlyField(
          await call('POST', '/v1/evals/suites', { key, body: { agent: agentId, name: 'refused', scorers: [{ type: 'json_schema', schema: { type: 'string', pattern } }] } }),
        );
        expect(schemaScorer.field).to.equal('body.scorers[0].schema');
        expect(schemaScorer.message).to.match(why);

        const accepted = await createSuite(key, agentId, `cases-${UNRUNNABLE.findIndex(([p]) => p === pattern)}`, [{ type: 'contains' }]);
        const cases = await call('POST', `/v1/evals/suites/${accepted.id}/cases`, { key, body: { input: 'x', expected: 'y', scorers: [{ type: 'regex', pattern }] } });
        const caseField = onlyField(cases);
        expect(caseField.field).to.equal('body.scorers[0].pattern');
        expect(caseField.message).to.match(why);
      });
    });
  }

  it('nothing refused was saved', async () => {
    expect((await call('GET', '/v1/guardrails', { key })).body.guardrails).to.deep.equal([]);
    expect((await call('GET', '/v1/evals/suites/refused', { key })).status).to.equal(404);
  });

  it('accepts a catastrophic shape, and a run guarded by it finishes promptly on a 20 000-character input', async () => {
    const created = await call('POST', '/v1/guardrails', { key, body: { name: 'nested', kind: 'regex', action: 'block', target: 'input', config: { pattern: '^(a+)+$' } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    try {
      const started = Date.now();
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: `${'a'.repeat(19_999)}!` } });
      expect(response.frames.at(-1)!.event).to.equal('run.completed');
      // The run's own overhead is most of this; a backtracking match would not end in the lifetime of the machine.
      expect(Date.now() - started).to.be.below(30_000);
    } finally {
      await call('DELETE', '/v1/guardrails/nested', { key });
    }
  });
});

describe("regex: the API's own schema patterns run in linear time", () => {
  it("refuses a megabyte URL that V8's backtracking engine would take minutes over, promptly and naming the field", async () => {
    const { key } = await newTenant('regex-api-own');
    // `^https?://[^\s/?#]+[^\s]*$` before its rewrite: quadratic on a trailing space (0.35 s at 20 000
    // characters, about fifteen minutes at a million). Ajv runs a pattern even when maxLength has failed.
    const url = `http://${'a'.repeat(1_000_000)} `;
    for (const [body, field] of [
      [{ name: 'long-url', kind: 'http', http: { method: 'GET', url } }, 'body.http.url'],
      [{ name: 'long-url', kind: 'mcp', mcp: { server_url: url, tool: 't' } }, 'body.mcp.server_url'],
    ] as const) {
      const started = Date.now();
      const response = await call('POST', '/v1/tools', { key, body });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).to.equal(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).to.include(field);
      // Generous: the linear engine takes milliseconds, the backtracking one minutes.
      expect(Date.now() - started, field).to.be.below(10_000);
    }
  });
});
