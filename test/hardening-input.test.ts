import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, newTenant, type ApiResponse } from './support/api.js';
import { callTool, mcpClient } from './support/mcp-client.js';

/** Issue 11, "No input gives a 500": inputs a fuzzer found that reached Postgres (or a URL) unchecked. */
describe('hardening: hostile input is a 400 naming the field', () => {
  let key: string;
  let document: any;
  before(async () => {
    ({ key } = await newTenant('hardening'));
    document = (await call('GET', '/openapi.json')).body;
  });

  function expectFieldError(response: ApiResponse, field: string): void {
    expect(response.status, JSON.stringify(response.body)).to.equal(400);
    expect(response.body.error.code).to.equal('invalid_request');
    expect(response.body.error.fields.map((f: { field: string }) => f.field), JSON.stringify(response.body)).to.include(field);
  }

  /** Every list's path (path parameters filled in): each takes `cursor`. */
  function pagedLists(): string[] {
    return Object.entries(document.paths as Record<string, any>)
      .filter(([, item]) => item.get?.parameters?.some((p: { name: string; in: string }) => p.name === 'cursor' && p.in === 'query'))
      .map(([path]) => path.replace(/\{[^}]+\}/g, 'x'));
  }

  it('takes a request without a body only where the document marks the body optional (a body that asks for nothing)', async () => {
    const bodies = Object.values(document.paths as Record<string, any>).flatMap((item) =>
      Object.values(item as Record<string, any>).filter((operation) => operation.requestBody?.content?.['application/json']),
    );
    const optional = bodies.filter((operation) => operation.requestBody.required === false);
    expect(optional.map((operation) => operation.operationId)).to.include.members(['rotateWebhookSecret', 'rotateChannelSecret']);
    for (const operation of optional) {
      expect(operation.requestBody.content['application/json'].schema.required ?? [], operation.operationId).to.deep.equal([]);
    }
    // Anywhere else an absent body is a 400 naming it, as before; and a JSON null is no absent body.
    expectFieldError(await call('POST', '/v1/agents', { key }), 'body');
    expectFieldError(await call('POST', '/v1/api-keys', { key, body: null }), 'body');
    expect((await call('POST', '/v1/webhooks/whk_none/rotate-secret', { key })).status, 'no body, so on to the lookup').to.equal(404);
  });

  it('refuses a number of the query that is not finite on every list ("Infinity", "-Infinity", "1e400"), not a 500', async () => {
    for (const path of pagedLists()) {
      for (const limit of ['Infinity', '-Infinity', '1e400']) {
        const response = await call('GET', `${path}?limit=${limit}`, { key });
        if (response.status === 404) continue; // a list under a resource that does not exist
        expect(response.status, `${path}?limit=${limit}: ${JSON.stringify(response.body)}`).to.equal(400);
      }
    }
    expectFieldError(await call('GET', '/v1/prompts?limit=-Infinity', { key }), 'query.limit');
    expect((await call('GET', '/v1/prompts?limit=5', { key })).status).to.equal(200);
  });

  it('means by the published model id pattern what the API takes: any characters after the slash', async () => {
    // A dot stops at \r in ECMA-262 but not in Python (schemathesis generates with Python's rules).
    expect(JSON.stringify(document)).to.include(JSON.stringify('/[\\s\\S]+|scripted(?:/[\\s\\S]*)?)$').slice(1, -1));
    const model = 'scripted/line\rbreak\u0001';
    const created = await call('POST', '/v1/knowledge', { key, body: { name: 'any-model-chars', graph: { model } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.knowledge_base.graph.model).to.equal(model);
    await call('DELETE', '/v1/knowledge/any-model-chars', { key });
  });

  describe('cursors', () => {
    it('refuses a cursor with a NUL character on every paged list', async () => {
      const lists = pagedLists();
      expect(lists).to.include.members(['/v1/knowledge', '/v1/prompts', '/v1/agents', '/v1/tools']);
      for (const path of lists) {
        expectFieldError(await call('GET', `${path}?cursor=%C3%9C%C2%80%00`, { key }), 'query.cursor');
      }
    });

    it('answers a cursor of invalid UTF-8 without a 5xx', async () => {
      for (const path of pagedLists()) {
        const response = await call('GET', `${path}?cursor=%FF%FE%C3`, { key });
        expect(response.status, `${path}: ${JSON.stringify(response.body)}`).to.be.oneOf([200, 400, 404]);
      }
    });
  });

  describe('integers', () => {
    it('refuses a version number beyond 2^31 in a path', async () => {
      await call('POST', '/v1/prompts', { key, body: { name: 'x', template: 'hello' } });
      expectFieldError(await call('GET', '/v1/prompts/x/versions/1126664298114717712384', { key }), 'params.version');
      expectFieldError(await call('GET', '/v1/prompts/x/versions/2147483648', { key }), 'params.version');
      expect((await call('GET', '/v1/prompts/x/versions/2147483647', { key })).status).to.equal(404);
      expect((await call('GET', '/v1/prompts/x/versions/1', { key })).status).to.equal(200);
    });

    it('refuses an event sequence number beyond 2^31 in a query, and ignores one in Last-Event-ID', async () => {
      expectFieldError(await call('GET', '/v1/runs/run_missing/events?after=99999999999999', { key }), 'query.after');
      const header = await call('GET', '/v1/runs/run_missing/events', { key, headers: { 'Last-Event-ID': '99999999999999999999' } });
      expect(header.status).to.equal(404);
    });

    it('gives every integer of a request (path, query or body) a maximum that Postgres can hold', () => {
      const unbounded: string[] = [];
      const visit = (schema: unknown, where: string): void => {
        if (Array.isArray(schema)) return schema.forEach((item, index) => visit(item, `${where}/${index}`));
        if (!schema || typeof schema !== 'object') return;
        const node = schema as Record<string, unknown>;
        const types = Array.isArray(node.type) ? node.type : [node.type];
        if (types.includes('integer') && !(typeof node.maximum === 'number' && node.maximum <= 2 ** 31 - 1)) unbounded.push(where);
        for (const [keyword, child] of Object.entries(node)) visit(child, `${where}/${keyword}`);
      };
      for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
        for (const [method, operation] of Object.entries(item as Record<string, any>)) {
          for (const parameter of operation.parameters ?? []) visit(parameter.schema, `${method} ${path} ${parameter.in}.${parameter.name}`);
          visit(operation.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
        }
      }
      expect(unbounded).to.deep.equal([]);
    });
  });

  describe('NUL characters', () => {
    it('refuses \\u0000 in any string of a JSON body that would reach Postgres, naming the field', async () => {
      const agent = await call('POST', '/v1/agents', { key, body: { name: 'nul-agent' } });
      expect(agent.status).to.equal(201);
      const suite = await call('POST', '/v1/evals/suites', { key, body: { agent: 'nul-agent', name: 'nul-suite' } });
      expect(suite.status).to.equal(201);
      await call('POST', '/v1/knowledge', { key, body: { name: 'nul-kb' } });

      const cases: Array<[string, string, unknown, string]> = [
        ['POST', '/v1/memory', { content: 'remember \u0000 this' }, 'body.content'],
        ['POST', '/v1/prompts', { name: 'nul', template: 'Hello \u0000' }, 'body.template'],
        ['POST', '/v1/prompts', { name: 'nul\u0000name', template: 'Hello' }, 'body.name'],
        ['POST', '/v1/agents', { name: 'fine', description: '\u0000' }, 'body.description'],
        ['POST', '/v1/agents/nul-agent/versions', { graph: { nodes: [{ id: 'main', model: 'scripted', script: [{ text: 'a\u0000' }] }] } }, 'body.graph.nodes.0.script.0.text'],
        ['POST', '/v1/agents/nul-agent/versions', { graph: { nodes: [{ id: 'main', 'odd\u0000key': 1 }] } }, 'body.graph.nodes.0.odd\\u0000key'],
        ['POST', '/v1/knowledge', { name: 'kb2', description: 'x\u0000' }, 'body.description'],
        ['POST', '/v1/knowledge/nul-kb/documents', { title: 't', text: 'some \u0000 text' }, 'body.text'],
        ['POST', '/v1/tools', { name: 'nul_tool', kind: 'builtin', builtin: 'calculator', description: '\u0000' }, 'body.description'],
        ['POST', '/v1/guardrails', { name: 'nul', kind: 'keyword', config: { keywords: ['a\u0000'] } }, 'body.config.keywords.0'],
        ['POST', '/v1/evals/suites', { agent: 'nul-agent', name: 'nul\u0000' }, 'body.name'],
        ['POST', '/v1/evals/suites/nul-suite/cases', { input: 'q\u0000', expected: 'a' }, 'body.input'],
      ];
      for (const [method, path, body, field] of cases) {
        expectFieldError(await call(method, path, { key, body }), field);
      }
      // Nothing of it was stored.
      expect((await call('GET', '/v1/memory', { key })).body.memories).to.deep.equal([]);
      expect((await call('GET', '/v1/prompts', { key })).body.prompts.map((p: { name: string }) => p.name)).to.deep.equal(['x']);
    });

    it('refuses a lone surrogate (well-formed JSON, but not Unicode jsonb can store) in a body, naming the field', async () => {
      // JSON.stringify would keep them escaped too; written by hand to be sure of the bytes sent.
      const cases: Array<[string, string, string]> = [
        ['/v1/memory', '{"content": "half \\ud800 a pair"}', 'body.content'],
        ['/v1/agents/nul-agent/versions', '{"graph": {"nodes": [{"id": "main", "model": "scripted", "script": [{"text": "\\udc00"}]}]}}', 'body.graph.nodes.0.script.0.text'],
        ['/v1/agents/nul-agent/versions', '{"graph": {"nodes": [{"id": "main", "odd\\ud83dkey": 1}]}}', 'body.graph.nodes.0.odd\ufffdkey'],
        ['/v1/guardrails', '{"name": "lone", "kind": "keyword", "config": {"keywords": ["\\ud800"]}}', 'body.config.keywords.0'],
      ];
      for (const [path, rawBody, field] of cases) {
        const response = await call('POST', path, { key, rawBody });
        expectFieldError(response, field);
        expect(response.body.error.fields.find((f: { field: string }) => f.field === field).message).to.include('lone surrogate');
      }
      // A whole pair is a character like any other.
      expect((await call('POST', '/v1/memory', { key, rawBody: '{"content": "a pair: \\ud83d\\ude00"}' })).status).to.equal(201);
    });

    it('refuses a NUL character in a path parameter or a query value', async () => {
      expectFieldError(await call('GET', '/v1/agents/a%00b', { key }), 'params.id');
      expectFieldError(await call('GET', '/v1/prompts/a%00/versions', { key }), 'params.name');
      expectFieldError(await call('POST', '/v1/memory/search', { key, body: { query: '\u0000' } }), 'body.query');
    });
  });

  describe('kind-dependent requirements are in the OpenAPI document, and enforced by it', () => {
    const documentAjv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    // With the document's components beside it: its $refs (#/components/...) point there.
    const requestSchema = (path: string) => ({ ...document.paths[path].post.requestBody.content['application/json'].schema, components: document.components });

    const refusals: Array<[string, string, Record<string, unknown>, string]> = [
      ['a regex guardrail without config.pattern', '/v1/guardrails', { name: 'g', kind: 'regex', config: {} }, 'body.config.pattern'],
      ['a keyword guardrail without keywords', '/v1/guardrails', { name: 'g', kind: 'keyword', config: { pattern: 'x' } }, 'body.config.keywords'],
      ['a max_length guardrail beyond 2^31', '/v1/guardrails', { name: 'g', kind: 'max_length', config: { maxChars: 2 ** 31 } }, 'body.config.maxChars'],
      ['an mcp tool without mcp', '/v1/tools', { name: 't', kind: 'mcp' }, 'body.mcp'],
      ['an http tool without http', '/v1/tools', { name: 't', kind: 'http' }, 'body.http'],
      ['a builtin tool with http settings', '/v1/tools', { name: 't', kind: 'builtin', builtin: 'calculator', http: { method: 'GET', url: 'https://example.com' } }, 'body.http'],
      ['a regex scorer without pattern', '/v1/evals/suites', { agent: 'a', name: 's', scorers: [{ type: 'regex' }] }, 'body.scorers.0.pattern'],
      ['an llm_judge scorer without rubric', '/v1/evals/suites', { agent: 'a', name: 's', scorers: [{ type: 'llm_judge', model: 'scripted' }] }, 'body.scorers.0.rubric'],
    ];
    for (const [what, path, body, field] of refusals) {
      it(`refuses ${what}, in the document and on the server`, async () => {
        const validate = documentAjv.compile(requestSchema(path));
        expect(validate(structuredClone(body)), 'the document accepts it').to.equal(false);
        expectFieldError(await call('POST', path, { key, body }), field);
      });
    }

    it('still accepts what each kind needs', async () => {
      const regex = { name: 'g-ok', kind: 'regex', config: { pattern: 'secret-\\d+' } };
      const builtin = { name: 'calc_ok', kind: 'builtin', builtin: 'calculator' };
      expect(documentAjv.compile(requestSchema('/v1/guardrails'))(structuredClone(regex))).to.equal(true);
      expect(documentAjv.compile(requestSchema('/v1/tools'))(structuredClone(builtin))).to.equal(true);
      expect((await call('POST', '/v1/guardrails', { key, body: regex })).status).to.equal(201);
      expect((await call('POST', '/v1/tools', { key, body: builtin })).status).to.equal(201);
      expect((await call('POST', '/v1/guardrails', { key, body: { name: 'pii-ok', kind: 'pii' } })).status).to.equal(201);
    });

    it('says in the graph schema that node ids must be unique', () => {
      const graph = document.paths['/v1/agents/{id}/versions'].post.requestBody.content['application/json'].schema.properties.graph;
      expect(graph.properties.nodes.description).to.match(/unique/);
    });
  });

  describe('MCP path arguments', () => {
    let client: Client;
    before(async () => {
      await call('POST', '/v1/knowledge', { key, body: { name: 'mcp-kb' } });
      client = await mcpClient(key);
    });
    after(async () => {
      await client.close();
    });

    for (const documentId of ['..', '.', 'a/b', '../docs']) {
      it(`refuses ${JSON.stringify(documentId)} as a path argument, naming it`, async () => {
        const result = await callTool(client, 'deleteDocument', { kb: 'mcp-kb', documentId });
        expect(result.isError).to.equal(true);
        expect(result.body.status).to.equal(400);
        expect(result.body.error.fields.map((f: { field: string }) => f.field)).to.deep.equal(['documentId']);
      });
    }

    it('still dispatches an ordinary path argument', async () => {
      const result = await callTool(client, 'deleteDocument', { kb: 'mcp-kb', documentId: 'doc_missing' });
      expect(result.body.status).to.equal(404);
      // `..` would have addressed the knowledge base itself (DELETE /v1/knowledge/mcp-kb/): it is still there.
      const bases = (await call('GET', '/v1/knowledge', { key })).body.knowledge_bases.map((kb: { name: string }) => kb.name);
      expect(bases).to.include('mcp-kb');
    });
  });
});
