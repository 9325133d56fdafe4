import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { DispatchTickets } from '../api/mcp/internal-router.js';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { callTool, mcpClient, mcpUrl } from './support/mcp-client.js';

const metadataPath = '/.well-known/oauth-protected-resource/mcp';

describe('mcp server', () => {
  let tenant: { key: string; standardKey: string };
  let other: { key: string; standardKey: string };
  let client: Client;
  let standardClient: Client;
  let otherClient: Client;

  before(async () => {
    tenant = await newTenant('mcp');
    other = await newTenant('mcp-other');
    client = await mcpClient(tenant.key);
    standardClient = await mcpClient(tenant.standardKey);
    otherClient = await mcpClient(other.standardKey);
  });
  after(async () => {
    await Promise.all([client?.close(), standardClient?.close(), otherClient?.close()]);
  });

  describe('mcp tools/list', () => {
    it('lists every authenticated operation as a tool named by its operationId', async () => {
      const { tools } = await client.listTools();
      const document = (await call('GET', '/openapi.json')).body;
      const authenticated = Object.values(document.paths as Record<string, Record<string, any>>)
        .flatMap((methods) => Object.values(methods))
        .filter((operation) => !(Array.isArray(operation.security) && operation.security.length === 0))
        .map((operation) => operation.operationId as string);
      expect(tools.map((tool) => tool.name)).to.have.members(authenticated);
      expect(tools.map((tool) => tool.name)).to.include.members(['listAgents', 'createAgent', 'getRun', 'startRun', 'addDocument']);
      expect(tools.map((tool) => tool.name)).not.to.include.members(['getHealth', 'getOpenApiDocument']);
    });

    it('builds input schemas from the route declarations: path and query parameters, and the JSON body as `body`', async () => {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));

      const getRun = byName.get('getRun')!;
      expect(getRun.inputSchema).to.include({ type: 'object', additionalProperties: false });
      expect(getRun.inputSchema.required).to.deep.equal(['runId']);
      expect(getRun.inputSchema.properties).to.have.keys('runId');
      expect(getRun.annotations).to.include({ readOnlyHint: true, destructiveHint: false });

      const listAgents = byName.get('listAgents')!;
      expect(listAgents.inputSchema.properties).to.have.keys('limit', 'cursor');
      expect(listAgents.inputSchema.required ?? []).to.be.empty;
      expect((listAgents.inputSchema.properties as any).limit).to.include({ type: 'integer', maximum: 200 });

      const createAgent = byName.get('createAgent')!;
      expect(createAgent.inputSchema.required).to.deep.equal(['body']);
      const body = (createAgent.inputSchema.properties as any).body;
      expect(body).to.include({ type: 'object', additionalProperties: false });
      expect(body.required).to.include('name');
      expect(createAgent.description).to.be.a('string').and.include('POST /v1/agents');

      // The body is not flattened: PATCH /v1/prompts/{name} takes a path `name` and a body `name`.
      const updatePrompt = byName.get('updatePrompt')!;
      expect(updatePrompt.inputSchema.properties).to.have.keys('name', 'body');
      expect((updatePrompt.inputSchema.properties as any).body.properties).to.have.property('name');
      expect(updatePrompt.description).to.include('Management keys only');

      // addDocument takes the JSON variant of its body; startRun collects its event stream.
      expect((byName.get('addDocument')!.inputSchema.properties as any).body.required).to.include.members(['title', 'text']);
      expect(byName.get('startRun')!.outputSchema?.properties).to.have.property('events');
      expect(byName.get('deleteAgent')!.annotations).to.include({ destructiveHint: true });

      // A body that asks for nothing may be left out, as over REST.
      const rotate = byName.get('rotateWebhookSecret')!;
      expect(rotate.inputSchema.properties).to.have.keys('id', 'body');
      expect(rotate.inputSchema.required).to.deep.equal(['id']);
      const leftOut = await callTool(client, 'rotateWebhookSecret', { id: 'whk_none' });
      expect(leftOut.body, 'no body, so on to the lookup').to.deep.include({ status: 404 });
    });
  });

  describe('mcp tools/call', () => {
    it('creates and lists agents in the caller\'s own workspace only', async () => {
      const created = await callTool(client, 'createAgent', { body: { name: 'mcp-made', description: 'made over MCP' } });
      expect(created.isError, JSON.stringify(created.body)).to.equal(false);
      expect(created.body).to.include({ created: true });
      expect(created.body.agent).to.include({ name: 'mcp-made', description: 'made over MCP' });
      const agentId = created.body.agent.id as string;

      const listed = await callTool(client, 'listAgents', {});
      expect(listed.isError).to.equal(false);
      expect(listed.body.agents.map((agent: any) => agent.id)).to.deep.equal([agentId]);

      // The same agent over REST: one API behind both doors.
      expect((await call('GET', `/v1/agents/${agentId}`, { key: tenant.key })).body.agent.name).to.equal('mcp-made');

      const theirs = await callTool(otherClient, 'listAgents', {});
      expect(theirs.isError).to.equal(false);
      expect(theirs.body.agents).to.deep.equal([]);

      const foreign = await callTool(otherClient, 'getAgent', { id: agentId });
      expect(foreign.isError).to.equal(true);
      expect(foreign.body).to.deep.include({ status: 404 });
      expect(foreign.body.error.code).to.equal('not_found');
    });

    it('passes query parameters and path parameters through', async () => {
      for (const name of ['page-a', 'page-b', 'page-c']) await callTool(client, 'createAgent', { body: { name } });
      const first = await callTool(client, 'listAgents', { limit: 2 });
      expect(first.body.agents).to.have.length(2);
      expect(first.body.next_cursor).to.be.a('string');
      const rest = await callTool(client, 'listAgents', { limit: 2, cursor: first.body.next_cursor });
      expect(rest.body.agents.length).to.be.greaterThan(0);

      const byName = await callTool(client, 'getAgent', { id: 'page-b' });
      expect(byName.body.agent.name).to.equal('page-b');
    });

    it('answers 403 to a standard key calling a management-only operation', async () => {
      const created = await callTool(standardClient, 'createAgent', { body: { name: 'std-made' } });
      expect(created.isError).to.equal(false);
      const result = await callTool(standardClient, 'updateAgent', { id: created.body.agent.id, body: { description: 'nope' } });
      expect(result.isError).to.equal(true);
      expect(result.body).to.deep.include({ status: 403 });
      expect(result.body.error.code).to.equal('forbidden');

      const allowed = await callTool(client, 'updateAgent', { id: created.body.agent.id, body: { description: 'yes' } });
      expect(allowed.isError, JSON.stringify(allowed.body)).to.equal(false);
      expect(allowed.body.agent.description).to.equal('yes');
    });

    it('reports the API\'s validation errors, and unknown or missing arguments, as tool errors', async () => {
      const invalid = await callTool(client, 'createAgent', { body: { name: 'x', colour: 'red' } });
      expect(invalid.isError).to.equal(true);
      expect(invalid.body.status).to.equal(400);
      expect(invalid.body.error.code).to.equal('invalid_request');
      expect(JSON.stringify(invalid.body.error.fields)).to.include('colour');

      const unknown = await callTool(client, 'listAgents', { colour: 'red' });
      expect(unknown.isError).to.equal(true);
      expect(unknown.body.status).to.equal(400);
      expect(unknown.body.error.fields).to.deep.include({ field: 'colour', message: 'unknown argument; listAgents takes limit, cursor' });

      const missing = await callTool(client, 'getAgent', {});
      expect(missing.isError).to.equal(true);
      expect(missing.body.error.fields).to.deep.equal([{ field: 'id', message: 'required' }]);

      const noBody = await callTool(client, 'createAgent', {});
      expect(noBody.isError).to.equal(true);
      expect(noBody.body.status).to.equal(400);

      // A lone surrogate cannot go into the URL: a field error, not a JSON-RPC internal error nor a silent U+FFFD.
      const halfPath = await callTool(client, 'getAgent', { id: 'agent \ud800' });
      expect(halfPath.isError).to.equal(true);
      expect(halfPath.body.error.fields).to.deep.equal([{ field: 'id', message: 'must be well-formed Unicode text (it has a lone surrogate)' }]);
      const halfQuery = await callTool(client, 'listAgents', { cursor: 'c\udc00' });
      expect(halfQuery.isError).to.equal(true);
      expect(halfQuery.body.error.fields.map((f: { field: string }) => f.field)).to.deep.equal(['cursor']);
    });

    it('answers an unknown tool with a JSON-RPC error', async () => {
      let error: unknown;
      try {
        await client.callTool({ name: 'dropDatabase', arguments: {} });
      } catch (err) {
        error = err;
      }
      expect(String(error)).to.match(/unknown tool dropDatabase/);
    });

    it('runs an agent, collecting its event stream until the run ends', async () => {
      const agentId = await publishAgent(tenant.key, 'mcp-runner', scriptedGraph([{ text: 'Hello from the scripted model.' }]));
      const result = await callTool(client, 'startRun', { id: agentId, body: { input: 'hi' } });
      expect(result.isError, JSON.stringify(result.body)).to.equal(false);
      expect(result.body.ended).to.equal(true);
      expect(result.body.run_id).to.match(/^run_/);
      const types = result.body.events.map((event: any) => event.type);
      expect(types).to.deep.equal(['run.created', 'run.started', 'message.completed', 'run.completed']);
      expect(result.body.omitted_deltas).to.be.greaterThan(0);
      expect(result.body.events[2].text).to.equal('Hello from the scripted model.');
      expect(result.body.last_seq).to.equal(result.body.events.at(-1).seq);

      // With a progress token, each collected event is a progress notification.
      const progress: { progress: number; message?: string }[] = [];
      const again = (await client.callTool({ name: 'startRun', arguments: { id: agentId, body: { input: 'again' } } }, undefined, {
        onprogress: (notification) => progress.push(notification),
      })) as any;
      expect(again.structuredContent.ended).to.equal(true);
      expect(progress.map((p) => p.message)).to.deep.equal(['run.created', 'run.started', 'message.completed', 'run.completed']);
      expect(progress.map((p) => p.progress)).to.deep.equal([1, 2, 3, 4]);

      const run = await callTool(client, 'getRun', { runId: result.body.run_id });
      expect(run.body.run).to.include({ status: 'completed', output: 'Hello from the scripted model.' });

      const replayed = await callTool(client, 'streamRunEvents', { runId: result.body.run_id, after: 2 });
      expect(replayed.body.events.map((event: any) => event.type)).to.deep.equal(['message.completed', 'run.completed']);
      expect(replayed.body.run_id).to.equal(result.body.run_id);
    });

    it('adds a document with the JSON form of addDocument\'s body', async () => {
      const kb = await callTool(client, 'createKnowledgeBase', { body: { name: 'mcp-kb' } });
      expect(kb.isError, JSON.stringify(kb.body)).to.equal(false);
      const added = await callTool(client, 'addDocument', { kb: 'mcp-kb', body: { title: 'Notes', text: '# Notes\n\nMCP tools are API operations.' } });
      expect(added.isError, JSON.stringify(added.body)).to.equal(false);
      expect(added.body.document).to.include({ title: 'Notes' });
      const listed = await callTool(client, 'listDocuments', { kb: 'mcp-kb' });
      expect(listed.body.documents.map((doc: any) => doc.id)).to.deep.equal([added.body.document.id]);
    });

    it('answers what has arrived when a run outlasts the stream wait, and the run goes on', async () => {
      const agentId = await publishAgent(tenant.key, 'mcp-slow', scriptedGraph([{ text: 'one two three four five six', delay_ms: 4000 }]));
      const previous = process.env.MCP_STREAM_WAIT_MS;
      process.env.MCP_STREAM_WAIT_MS = '700';
      let result;
      try {
        result = await callTool(client, 'startRun', { id: agentId, body: { input: 'slowly' } });
      } finally {
        if (previous === undefined) delete process.env.MCP_STREAM_WAIT_MS;
        else process.env.MCP_STREAM_WAIT_MS = previous;
      }
      expect(result.isError, JSON.stringify(result.body)).to.equal(false);
      expect(result.body.ended).to.equal(false);
      expect(result.body.note).to.include('streamRunEvents');
      const runId = result.body.run_id as string;
      expect(runId).to.match(/^run_/);

      const rest = await callTool(client, 'streamRunEvents', { runId, after: result.body.last_seq });
      expect(rest.body.ended).to.equal(true);
      expect(rest.body.events.at(-1).type).to.equal('run.completed');
      expect((await callTool(client, 'getRun', { runId })).body.run.status).to.equal('completed');
    });
  });

  describe('mcp auth', () => {
    const post = (headers: Record<string, string> = {}) =>
      fetch(mcpUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const metadataUrl = () => `${testPlatform().apiUrl}${metadataPath}`;

    it('answers 401 with the resource metadata challenge to a request without a credential', async () => {
      const response = await post();
      expect(response.status).to.equal(401);
      const challenge = response.headers.get('www-authenticate')!;
      expect(challenge).to.match(/^Bearer /);
      expect(challenge).to.include(`resource_metadata="${metadataUrl()}"`);
      expect(challenge).not.to.include('error=');
      expect(((await response.json()) as any).error.code).to.equal('unauthorized');
    });

    for (const [what, credential] of [
      ['an unknown API key', 'svc_sk_0000000000000000000000000000000000000000000'],
      ['an unknown access token', 'svc_at_0000000000000000000000000000000000000000000'],
      ['a malformed token', 'not-a-token.at.all'],
    ] as const) {
      it(`answers 401 invalid_token, not 500, to ${what}`, async () => {
        const response = await post({ authorization: `Bearer ${credential}` });
        expect(response.status).to.equal(401);
        const challenge = response.headers.get('www-authenticate')!;
        expect(challenge).to.include(`resource_metadata="${metadataUrl()}"`);
        expect(challenge).to.include('error="invalid_token"');
      });
    }

    it('answers 401 to a revoked key', async () => {
      const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard', name: 'short-lived' } });
      const revoked = await call('DELETE', `/v1/api-keys/${created.body.api_key.id}`, { key: tenant.key });
      expect(revoked.status).to.equal(200);
      const response = await post({ authorization: `Bearer ${created.body.key}` });
      expect(response.status).to.equal(401);
      expect(response.headers.get('www-authenticate')).to.include('error="invalid_token"');
    });

    it('makes the SDK client fail to connect without a credential', async () => {
      const client = new McpClient({ name: 'anonymous', version: '1.0.0' });
      let error: unknown;
      try {
        await client.connect(new StreamableHTTPClientTransport(mcpUrl()));
      } catch (err) {
        error = err;
      }
      expect(String(error)).to.match(/401|Unauthorized/i);
    });

    it("refuses a message nested deeper than a REST body may be with a JSON-RPC error, and takes one as deep", async () => {
      // Written as text: JSON.stringify itself overflows on such depth.
      const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
      const callWithBody = (metadata: string) =>
        fetch(mcpUrl(), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${tenant.key}` },
          body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"createAgent","arguments":{"body":{"name":"deep","metadata":${metadata}}}}}`,
        });
      const deep = await callWithBody(nested(100_000));
      expect(deep.status).to.equal(400);
      expect(((await deep.json()) as any).error).to.include({ code: -32600 });
      // As deep as REST takes: the tool answers, with the API's own verdict on the body.
      const allowed = await callWithBody(nested(60));
      expect(allowed.status).to.equal(200);
      expect(await allowed.text()).to.include('"id":7');
    });

    it('answers JSON that is no JSON-RPC request with Invalid Request (-32600), and text that is no JSON with Parse error (-32700)', async () => {
      const postText = (body: string) =>
        fetch(mcpUrl(), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${tenant.key}` },
          body,
        });
      const invalid = [
        '[]',
        '42',
        '"tools/list"',
        '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
        '{"id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1,"method":7}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","result":{}}',
        '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":true,"method":"tools/list"}]',
      ];
      for (const body of invalid) {
        const response = await postText(body);
        expect(response.status, body).to.equal(400);
        const answer = (await response.json()) as any;
        expect(answer, body).to.deep.include({ jsonrpc: '2.0', id: null });
        expect(answer.error.code, body).to.equal(-32600);
      }
      const unparsable = await postText('{"jsonrpc":"2.0",');
      expect(unparsable.status).to.equal(400);
      expect(((await unparsable.json()) as any).error.code).to.equal(-32700);
      // A string id is as good as an integer one.
      const listed = await postText('{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}');
      expect(listed.status).to.equal(200);
      expect(await listed.text()).to.include('"id":"list-1"').and.include('getAgent');
    });

    it('answers 405 to GET and DELETE (the server is stateless), after authentication', async () => {
      const get = await fetch(mcpUrl(), { headers: { accept: 'text/event-stream', authorization: `Bearer ${tenant.key}` } });
      expect(get.status).to.equal(405);
      const remove = await fetch(mcpUrl(), { method: 'DELETE', headers: { authorization: `Bearer ${tenant.key}` } });
      expect(remove.status).to.equal(405);
      const anonymous = await fetch(mcpUrl(), { headers: { accept: 'text/event-stream' } });
      expect(anonymous.status).to.equal(401);
    });

    it('refuses a request with an unknown dispatch ticket, and a ticket works once', async () => {
      const forged = await fetch(`${testPlatform().apiUrl}/v1/agents`, { headers: { 'x-mcp-dispatch': 'made-up' } });
      expect(forged.status).to.equal(401);
      expect(((await forged.json()) as any).error.code).to.equal('unauthorized');

      const tickets = new DispatchTickets();
      const ticket = tickets.issue({ tenantId: 'ten_x', keyId: 'key_x', kind: 'standard' });
      expect(ticket).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(tickets.take(ticket)).to.deep.equal({ tenantId: 'ten_x', keyId: 'key_x', kind: 'standard' });
      expect(tickets.take(ticket)).to.equal(undefined);
    });

    it('answers a CORS preflight without a credential', async () => {
      const response = await fetch(mcpUrl(), {
        method: 'OPTIONS',
        headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expect(response.status).to.equal(204);
      expect(response.headers.get('access-control-allow-origin')).to.equal('*');
      expect(response.headers.get('access-control-allow-headers')).to.match(/Authorization/);
      expect(response.headers.get('access-control-expose-headers')).to.match(/WWW-Authenticate/);
    });

    it('serves the RFC 9728 protected resource metadata', async () => {
      const apiUrl = testPlatform().apiUrl;
      const response = await fetch(metadataUrl(), { headers: { origin: 'https://inspector.example' } });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      expect(response.headers.get('access-control-allow-origin')).to.equal('*');
      expect(await response.json()).to.deep.equal({
        resource: `${apiUrl}/mcp`,
        authorization_servers: [apiUrl],
        bearer_methods_supported: ['header'],
        scopes_supported: ['api'],
        resource_name: 'Agent Platform MCP server',
      });
    });
  });
});
