import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/**
 * What schemathesis (scripts/fuzz-api.sh, docs/fuzzing.md) found where the server and its OpenAPI
 * document disagreed. Each test fails on the code before its fix.
 */
describe('fuzz findings', () => {
  let key: string;
  let document: any;
  let ajv: InstanceType<typeof Ajv2020>;
  before(async () => {
    ({ key } = await newTenant('fuzz-findings'));
    document = (await call('GET', '/openapi.json')).body;
    ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
  });

  /** Whether `value` satisfies the JSON request body the document declares for `method path`. */
  function documentAccepts(method: string, path: string, value: unknown): boolean {
    const schema = document.paths[path][method].requestBody.content['application/json'].schema;
    // The document's $refs point into its components, which 'doc' holds.
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
    return validate(value) as boolean;
  }

  describe('a concrete path is matched before a template that also matches it (OpenAPI path matching)', () => {
    for (const path of ['/v1/memory/search', '/v1/knowledge/search']) {
      it(`OPTIONS ${path} allows only what the document lists`, async () => {
        const response = await call('OPTIONS', path, { key });
        expect(response.status).to.equal(204);
        expect(response.headers.get('allow')).to.equal('POST, OPTIONS');
        expect(Object.keys(document.paths[path])).to.deep.equal(['post']);
      });

      it(`PATCH and DELETE ${path} are 405, not the {id} operation's 404`, async () => {
        for (const method of ['PATCH', 'DELETE']) {
          const response = await call(method, path, { key, body: { content: 'x', name: 'x' } });
          expect(response.status, `${method} ${JSON.stringify(response.body)}`).to.equal(405);
          expect(response.body.error.code).to.equal('method_not_allowed');
          expect(response.headers.get('allow')).to.equal('POST, OPTIONS');
        }
      });

      it(`PATCH ${path} in capitals or with a trailing slash is the same 405, as routing ignores both`, async () => {
        for (const variant of [path.toUpperCase(), `${path}/`, `${path.replace('search', 'Search')}/`]) {
          // Not the document's spelling, which `call` checks answers against: plain fetch.
          const response = await fetch(testPlatform().apiUrl + variant, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ content: 'x', name: 'x' }),
          });
          expect(response.status, variant).to.equal(405);
          expect(response.headers.get('allow'), variant).to.equal('POST, OPTIONS');
        }
      });
    }

    it('keeps a knowledge base from taking the name `search`, which only its id could then address', async () => {
      const created = await call('POST', '/v1/knowledge', { key, body: { name: 'search' } });
      expect(created.status).to.equal(400);
      expect(created.body.error.fields.map((f: { field: string }) => f.field)).to.include('body.name');
      await call('POST', '/v1/knowledge', { key, body: { name: 'findable' } });
      expect((await call('PATCH', '/v1/knowledge/findable', { key, body: { name: 'search' } })).status).to.equal(400);
    });

    it('still serves the templated path for other values', async () => {
      const created = await call('POST', '/v1/memory', { key, body: { content: 'the sky is blue' } });
      const patched = await call('PATCH', `/v1/memory/${created.body.memory.id}`, { key, body: { content: 'the sky is grey' } });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    });
  });

  describe('event streams', () => {
    it("document each event as a client parses it (id, event, data), and a run's frames match", async () => {
      const streams = [
        ['/v1/agents/{id}/runs', 'post'],
        ['/v1/runs/{runId}/events', 'get'],
        ['/v1/evals/experiments/{id}/events', 'get'],
      ];
      for (const [path, method] of streams) {
        const schema = document.paths[path!][method!].responses['200'].content['text/event-stream'].schema;
        expect(schema.type, path).to.equal('object');
        expect(schema.required, path).to.have.members(['id', 'event', 'data']);
      }
      const agentId = await publishAgent(key, 'fuzz-sse', scriptedGraph([{ text: 'ok' }]));
      const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'hello' } });
      expect(run.status).to.equal(200);
      const validate = ajv.compile(document.paths['/v1/agents/{id}/runs'].post.responses['200'].content['text/event-stream'].schema);
      expect(run.frames.map((f) => f.event)).to.include('run.completed');
      for (const frame of run.frames) {
        const parsed = { id: String(frame.id), event: frame.event, data: JSON.stringify(frame.data) };
        expect(validate(parsed), JSON.stringify(validate.errors)).to.equal(true);
      }
    });
  });

  describe('the document states what the server refuses', () => {
    it('refuses U+0000 in request strings and object keys, as the server does', async () => {
      expect(documentAccepts('post', '/v1/memory', { content: 'a fact' })).to.equal(true);
      expect(documentAccepts('post', '/v1/memory', { content: 'a\u0000fact' })).to.equal(false);
      expect((await call('POST', '/v1/memory', { key, body: { content: 'a\u0000fact' } })).status).to.equal(400);

      const withMetadata = (metadata: unknown) => ({ input: 'q', metadata });
      expect(documentAccepts('post', '/v1/evals/suites/{ref}/cases', withMetadata({ a: [{ b: 'c' }] }))).to.equal(true);
      expect(documentAccepts('post', '/v1/evals/suites/{ref}/cases', withMetadata({ a: [{ b: 'c\u0000' }] }))).to.equal(false);
      expect(documentAccepts('post', '/v1/evals/suites/{ref}/cases', withMetadata({ 'a\u0000': 1 }))).to.equal(false);

      const cursor = document.paths['/v1/prompts'].get.parameters.find((p: { name: string }) => p.name === 'cursor');
      expect(ajv.validate(cursor.schema, 'abc')).to.equal(true);
      expect(ajv.validate(cursor.schema, 'a\u0000c')).to.equal(false);
    });

    it('lists the scorer types, and an unknown type is a 400 naming the field with the types', async () => {
      const body = (type: string) => ({ agent: 'none', name: 'suite', scorers: [{ type }] });
      expect(documentAccepts('post', '/v1/evals/suites', body('exact'))).to.equal(true);
      expect(documentAccepts('post', '/v1/evals/suites', body(''))).to.equal(false);

      const response = await call('POST', '/v1/evals/suites', { key, body: body('') });
      expect(response.status).to.equal(400);
      const field = response.body.error.fields.find((f: { field: string }) => f.field === 'body.scorers.0.type');
      expect(field?.message, JSON.stringify(response.body)).to.match(/^must be one of exact, contains, regex/);
    });

    it("refuses another kind's settings in a PATCH that names the kind", async () => {
      expect(documentAccepts('patch', '/v1/tools/{id}', { kind: 'mcp', mcp: { server_url: 'https://mcp.example/', tool: 't' } })).to.equal(true);
      expect(documentAccepts('patch', '/v1/tools/{id}', { kind: 'mcp', builtin: 'ask_human' })).to.equal(false);
      expect(documentAccepts('patch', '/v1/tools/{id}', { builtin: 'ask_human' })).to.equal(true);
    });

    it("refuses an MCP server URL that matches the pattern but is no URL (stored, it broke schemathesis' reading of the echo)", async () => {
      const mcp = { server_url: 'http://\u00eb[X\u00d9', tool: 't' };
      expect(documentAccepts('post', '/v1/tools', { name: 'bad_mcp', kind: 'mcp', mcp })).to.equal(true);
      const response = await call('POST', '/v1/tools', { key, body: { name: 'bad_mcp', kind: 'mcp', mcp } });
      expect(response.status).to.equal(400);
      expect(response.body.error.fields).to.deep.equal([{ field: 'body.mcp.server_url', message: 'is not a valid URL' }]);
      const tools = await call('GET', '/v1/tools?limit=200', { key });
      expect(tools.body.tools.map((t: { name: string }) => t.name), 'nothing stored').to.not.include('bad_mcp');
    });
  });
});
