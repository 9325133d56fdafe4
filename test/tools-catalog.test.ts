import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { ALLOWED_TOOL_HOST, testPlatform } from './support/global.js';
import { stream } from './support/sse.js';
import { sendJson, startToolServer, type LocalToolServer } from './support/tool-http-server.js';
import { startMcpToolServer, type LocalMcpServer } from './support/tool-mcp-server.js';

describe('tool catalog', () => {
  let key: string;
  before(async () => {
    ({ key } = await newTenant('tools'));
  });

  it('creates with 201, returns the existing tool unchanged with 200, changes it with PATCH, and lists the catalog with header values redacted', async () => {
    const first = await call('POST', '/v1/tools', { key, body: { name: 'calc', kind: 'builtin', builtin: 'calculator' } });
    expect(first.status).to.equal(201);
    expect(first.body.tool).to.include({ name: 'calc', kind: 'builtin', builtin: 'calculator', description: null });
    expect(first.body.tool.id).to.match(/^tool_/);

    // The spec's upsert by name: an existing name answers the tool as it is, whatever the body says.
    const again = await call('POST', '/v1/tools', { key, body: { name: 'calc', kind: 'builtin', builtin: 'ask_human', description: 'sums' } });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.include({ created: false });
    expect(again.body.tool).to.deep.equal(first.body.tool);

    const changed = await call('PATCH', `/v1/tools/${first.body.tool.id}`, { key, body: { description: 'sums' } });
    expect(changed.status).to.equal(200);
    expect(changed.body.tool).to.include({ id: first.body.tool.id, name: 'calc', builtin: 'calculator', description: 'sums' });

    await call('POST', '/v1/tools', {
      key,
      body: { name: 'lookup', kind: 'http', http: { method: 'GET', url: 'https://api.example.com/items/{id}', headers: { Authorization: 'Bearer secret' }, arguments_schema: { type: 'object', properties: { id: { type: 'string' } } } } },
    });
    const listed = await call('GET', '/v1/tools', { key });
    expect(listed.body.tools.map((t: { name: string }) => t.name)).to.deep.equal(['calc', 'lookup']);
    expect(listed.body.tools[1].http.headers).to.deep.equal({ Authorization: '[redacted]' });
    expect(JSON.stringify(listed.body)).to.not.include('secret');
  });

  it('changes a tool with PATCH by id or name: rename, new kind with its settings, 404, 409 and 400', async () => {
    const tool = (await call('POST', '/v1/tools', { key, body: { name: 'patched', kind: 'builtin', builtin: 'calculator', description: 'adds' } })).body.tool;
    const renamed = await call('PATCH', '/v1/tools/patched', { key, body: { name: 'patched_twice' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.tool).to.include({ id: tool.id, name: 'patched_twice', kind: 'builtin', builtin: 'calculator', description: 'adds' });

    const http = { method: 'GET', url: 'https://api.example.com/items', headers: { Authorization: 'Bearer secret' } };
    const rekinded = await call('PATCH', `/v1/tools/${tool.id}`, { key, body: { kind: 'http', http, description: null } });
    expect(rekinded.status).to.equal(200);
    expect(rekinded.body.tool).to.include({ kind: 'http', builtin: null, mcp: null, description: null });
    expect(rekinded.body.tool.http).to.deep.include({ url: 'https://api.example.com/items', headers: { Authorization: '[redacted]' } });
    const row = await testPlatform().db.selectFrom('tools').select(['http', 'builtin']).where('id', '=', tool.id).executeTakeFirstOrThrow();
    expect(row).to.deep.include({ builtin: null });
    expect((row.http as { headers: object }).headers).to.deep.equal({ Authorization: 'Bearer secret' });

    await call('POST', '/v1/tools', { key, body: { name: 'taken', kind: 'builtin', builtin: 'calculator' } });
    expect((await call('PATCH', `/v1/tools/${tool.id}`, { key, body: { name: 'taken' } })).status).to.equal(409);
    expect((await call('PATCH', '/v1/tools/tool_missing', { key, body: { description: 'x' } })).status).to.equal(404);
    for (const body of [{}, { kind: 'mcp' }, { builtin: 'calculator' }, { http: { method: 'GET', url: 'ftp://a.example/' } }, { name: 'has space' }]) {
      const response = await call('PATCH', `/v1/tools/${tool.id}`, { key, body });
      expect(response.status, JSON.stringify(body)).to.equal(400);
    }
    const unchanged = (await call('GET', '/v1/tools?limit=200', { key })).body.tools.find((t: { id: string }) => t.id === tool.id);
    expect(unchanged).to.include({ name: 'patched_twice', kind: 'http' });
  });

  it('creates a new name once when saved concurrently: one 201, the rest 200 with the same tool', async () => {
    // On Postgres, saves that both find no row used to race to the unique key (a 500); PGlite serializes them.
    const saves = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call('POST', '/v1/tools', { key, body: { name: 'racy', kind: 'builtin', builtin: 'calculator', description: `save ${i}` } })),
    );
    expect(saves.map((r) => r.status).sort()).to.deep.equal([...Array(23).fill(200), 201]);
    expect(new Set(saves.map((r) => r.body.tool.id)).size).to.equal(1);
  });

  it('rejects unknown built-in keys, missing or foreign settings, and bad HTTP templates with 400', async () => {
    const bad: Array<Record<string, unknown>> = [
      { name: 'x', kind: 'builtin', builtin: 'teleport' },
      { name: 'x', kind: 'builtin' },
      { name: 'x', kind: 'http' },
      { name: 'x', kind: 'builtin', builtin: 'calculator', http: { method: 'GET', url: 'https://a.example/' } },
      { name: 'x', kind: 'http', http: { method: 'GET', url: 'ftp://a.example/' } },
      { name: 'x', kind: 'http', http: { method: 'GET', url: 'https://a.example/{id}', arguments_schema: { type: 'object', properties: {} } } },
      { name: 'x', kind: 'mcp', mcp: { server_url: 'https://a.example/mcp' } },
      { name: 'has space', kind: 'builtin', builtin: 'calculator' },
      { name: 'x', kind: 'magic' },
    ];
    for (const body of bad) {
      const response = await call('POST', '/v1/tools', { key, body });
      expect(response.status, JSON.stringify(body)).to.equal(400);
      expect(response.body.error.fields, JSON.stringify(body)).to.not.be.empty;
    }
    expect((await call('GET', '/v1/tools', { key })).body.tools.map((t: { name: string }) => t.name)).to.not.include('x');
  });

  describe('in runs', () => {
    let server: LocalToolServer;
    let mcp: LocalMcpServer;
    before(async () => {
      server = await startToolServer((request, res) => sendJson(res, 200, { echoed: request.url }), ALLOWED_TOOL_HOST);
      mcp = await startMcpToolServer(ALLOWED_TOOL_HOST);
    });
    after(async () => {
      await server.close();
      await mcp.close();
    });

    async function runWithTool(name: string, tool: Record<string, unknown>, args: Record<string, unknown>) {
      const toolId = await createTool(key, { name, ...tool });
      const agentId = await publishAgent(key, `uses-${name}`, scriptedGraph([{ tool_calls: [{ tool: name, arguments: args }] }, { text: 'done' }], [toolId]));
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'use the tool' } });
      const runId = response.frames[0]!.data.run_id;
      return (await call('GET', `/v1/runs/${runId}`, { key })).body;
    }

    it('calls an HTTP tool on an allow-listed host', async () => {
      const record = await runWithTool(
        'allowed_http',
        { kind: 'http', http: { method: 'GET', url: `${server.origin}/items/{id}`, arguments_schema: { type: 'object', properties: { id: { type: 'string' }, q: { type: 'string' } } } } },
        { id: 'a b', q: 'x' },
      );
      expect(record.run.status).to.equal('completed');
      expect(record.steps[0]).to.include({ status: 'completed' });
      expect(record.steps[0].result).to.deep.equal({ echoed: '/items/a%20b?q=x' });
    });

    it('refuses an HTTP tool aimed at loopback, private or metadata addresses, as a failed step', async () => {
      const before = server.requests.length;
      for (const [name, url] of [
        ['loopback', `http://127.0.0.1:${server.port}/x`],
        ['localhost', `http://localhost:${server.port}/x`],
        ['metadata', 'http://169.254.169.254/latest/meta-data/'],
        ['private', 'http://10.1.2.3/x'],
      ] as const) {
        const record = await runWithTool(`refused_${name}`, { kind: 'http', http: { method: 'GET', url } }, {});
        expect(record.run.status, name).to.equal('completed');
        expect(record.steps[0].status, name).to.equal('failed');
        expect(record.steps[0].error, name).to.match(/refused/);
      }
      expect(server.requests.length).to.equal(before);
    });

    it('refuses a redirect from an allowed host to a refused one', async () => {
      const redirecting = await startToolServer((_request, res) => {
        res.writeHead(302, { location: 'http://127.0.0.1:9/secret' }).end();
      }, ALLOWED_TOOL_HOST);
      try {
        const record = await runWithTool('redirector', { kind: 'http', http: { method: 'GET', url: `${redirecting.origin}/go` } }, {});
        expect(record.steps[0].status).to.equal('failed');
        expect(record.steps[0].error).to.match(/refused.*127\.0\.0\.1/);
      } finally {
        await redirecting.close();
      }
    });

    it('calls a tool of an MCP server over Streamable HTTP', async () => {
      const record = await runWithTool('mcp_add', { kind: 'mcp', mcp: { server_url: mcp.url, tool: 'add' } }, { a: 2, b: 40 });
      expect(record.steps[0]).to.include({ status: 'completed', tool: 'mcp_add' });
      expect(JSON.stringify(record.steps[0].result)).to.include('42');
      const failing = await runWithTool('mcp_fail', { kind: 'mcp', mcp: { server_url: mcp.url, tool: 'fail' } }, {});
      expect(failing.steps[0].status).to.equal('failed');
    });
  });
});
