import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OutboundRefusedError, OutboundTimeoutError, ToolArgumentsError, ToolConfigError, ToolUpstreamError } from '../activities/tools/errors.js';
import { callHttpTool, httpToolConfigProblems, httpToolConfigSchema, mcpToolConfigSchema } from '../activities/tools/http-tool.js';
import type { HttpToolConfig, ToolCallOptions } from '../activities/tools/types.js';
import { sendJson, sendText, startToolServer, type LocalToolServer } from './support/tool-http-server.js';
import { failure } from './support/failure.js';

const allowed: ToolCallOptions = { policy: { allow: ['127.0.0.1'] } };

describe('tools: http tool', () => {
  let server: LocalToolServer;
  before(async () => {
    server = await startToolServer(async (req, res) => {
      const url = new URL(req.url, 'http://x');
      if (url.pathname === '/text') return sendText(res, 200, 'plain answer');
      if (url.pathname === '/problem') return sendJson(res, 200, { title: 'fine' }, 'application/problem+json');
      if (url.pathname === '/lying-json') return sendText(res, 200, 'not json', 'application/json');
      if (url.pathname === '/empty') return void res.writeHead(204).end();
      if (url.pathname === '/missing') return sendText(res, 404, `no such user\n${'detail '.repeat(200)}`);
      if (url.pathname === '/down') return sendText(res, 503, 'try later');
      if (url.pathname === '/slow') return void setTimeout(() => sendText(res, 200, 'late'), 1000);
      sendJson(res, 200, { method: req.method, path: url.pathname, query: url.search, body: req.body });
    });
  });
  after(() => server.close());

  const tool = (url: string, extra: Partial<HttpToolConfig> = {}): HttpToolConfig => ({ method: 'GET', url: `${server.origin}${url}`, ...extra });

  it('fills placeholders URL-encoded and sends the other arguments as query parameters on GET', async () => {
    const result = await callHttpTool(tool('/users/{id}/posts?fixed=1'), { id: 'a b/../c?', limit: 5, tags: ['x', 'y'], skip: null }, allowed);
    expect(result).to.deep.include({ method: 'GET', path: '/users/a%20b%2F..%2Fc%3F/posts', query: '?fixed=1&limit=5&tags=x&tags=y', body: '' });
  });

  it('sends the other arguments as query parameters on DELETE', async () => {
    const result = await callHttpTool(tool('/items/{id}', { method: 'DELETE' }), { id: 7, hard: true }, allowed);
    expect(result).to.deep.include({ method: 'DELETE', path: '/items/7', query: '?hard=true' });
  });

  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    it(`sends the other arguments as a JSON body on ${method}`, async () => {
      const result = (await callHttpTool(tool('/items/{id}', { method }), { id: 7, title: 'T', nested: { a: [1] } }, allowed)) as any;
      expect(result).to.include({ method, path: '/items/7', query: '' });
      expect(JSON.parse(result.body)).to.deep.equal({ title: 'T', nested: { a: [1] } });
      expect(server.requests.at(-1)!.headers['content-type']).to.equal('application/json');
    });
  }

  it('sends the configured headers', async () => {
    await callHttpTool(tool('/h', { headers: { Authorization: 'Bearer abc', 'X-Tenant': 't1' } }), {}, allowed);
    expect(server.requests.at(-1)!.headers).to.include({ authorization: 'Bearer abc', 'x-tenant': 't1' });
  });

  it('checks the arguments against arguments_schema and fills its defaults', async () => {
    const config = tool('/weather/{city}', {
      arguments_schema: {
        type: 'object',
        required: ['city'],
        additionalProperties: false,
        properties: { city: { type: 'string', minLength: 1 }, units: { enum: ['metric', 'imperial'], default: 'metric' } },
      },
    });
    const missing = await failure(callHttpTool(config, {}, allowed));
    expect(missing).to.be.instanceOf(ToolArgumentsError);
    expect(missing.message).to.equal('invalid arguments: arguments.city is required');
    const wrong = await failure(callHttpTool(config, { city: 3, extra: 1 }, allowed));
    expect(wrong.message).to.equal('invalid arguments: arguments.extra is not allowed; arguments.city must be string');
    expect((await callHttpTool(config, { city: 'Oslo' }, allowed)) as any).to.include({ path: '/weather/Oslo', query: '?units=metric' });
  });

  it('refuses a call whose URL placeholder has no argument, or an object for one', async () => {
    const missing = await failure(callHttpTool(tool('/users/{id}'), {}, allowed));
    expect(missing).to.be.instanceOf(ToolArgumentsError);
    expect(missing.message).to.equal("missing argument 'id', needed for the URL");
    expect((await failure(callHttpTool(tool('/users/{id}'), { id: { a: 1 } }, allowed))).message).to.match(/must be a string, number or boolean/);
  });

  it('answers parsed JSON for JSON responses, text otherwise, and null for an empty body', async () => {
    expect(await callHttpTool(tool('/json'), {}, allowed)).to.deep.include({ path: '/json' });
    expect(await callHttpTool(tool('/problem'), {}, allowed)).to.deep.equal({ title: 'fine' });
    expect(await callHttpTool(tool('/text'), {}, allowed)).to.equal('plain answer');
    expect(await callHttpTool(tool('/lying-json'), {}, allowed)).to.equal('not json');
    expect(await callHttpTool(tool('/empty', { method: 'DELETE' }), {}, allowed)).to.equal(null);
  });

  it('fails a non-2xx answer with its status and the start of its body', async () => {
    const missing = await failure(callHttpTool(tool('/missing?key=secret'), {}, allowed));
    expect(missing).to.be.instanceOf(ToolUpstreamError);
    expect((missing as ToolUpstreamError).status).to.equal(404);
    expect((missing as ToolUpstreamError).retryable).to.equal(false);
    expect(missing.message).to.match(new RegExp(`^GET ${server.origin}/missing answered 404: no such user detail detail`));
    expect(missing.message).not.to.include('secret');
    expect(missing.message.length).to.be.below(600);
    const down = await failure(callHttpTool(tool('/down'), {}, allowed));
    expect((down as ToolUpstreamError).retryable).to.equal(true);
  });

  it('times out after timeout_ms', async () => {
    const err = await failure(callHttpTool(tool('/slow', { timeout_ms: 150 }), {}, allowed));
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    expect(err.message).to.equal(`GET ${server.origin}/slow timed out after 150 ms`);
  });

  it('is refused when the operator did not allow the address', async () => {
    const err = await failure(callHttpTool(tool('/json'), {}, { policy: { allow: [] } }));
    expect(err).to.be.instanceOf(OutboundRefusedError);
  });

  it('fails clearly when arguments_schema is not a usable schema', async () => {
    const err = await failure(callHttpTool(tool('/json', { arguments_schema: { type: 'object', properties: { a: { type: 'nonsense' } } } }), {}, allowed));
    expect(err).to.be.instanceOf(ToolConfigError);
    expect(err.message).to.match(/arguments_schema is not a usable JSON Schema/);
  });

  describe('configuration schemas', () => {
    // Compiled as the API compiles request bodies: strict.
    const ajv = addFormats.default(new Ajv2020({ allErrors: true, strict: true }));
    const validHttp = ajv.compile(httpToolConfigSchema);
    const validMcp = ajv.compile(mcpToolConfigSchema);

    it('accepts a full HTTP tool and rejects what does not fit', () => {
      const good = {
        method: 'POST',
        url: 'https://api.example.com/v1/items/{id}',
        headers: { Authorization: 'Bearer x' },
        arguments_schema: { type: 'object', properties: { id: { type: 'string' } } },
        timeout_ms: 5000,
      };
      expect(validHttp(good), JSON.stringify(validHttp.errors)).to.equal(true);
      expect(validHttp({ method: 'GET', url: 'http://localhost:8080/x' })).to.equal(true);
      for (const bad of [
        { ...good, extra: 1 },
        { ...good, method: 'HEAD' },
        { ...good, url: 'ftp://example.com/' },
        { ...good, url: 'https:///nohost' },
        { ...good, url: 'https://a b/' },
        { ...good, headers: { 'X-A': 1 } },
        { ...good, headers: { 'Bad Name': 'x' } },
        { ...good, headers: { 'X-A': 'a\r\nInjected: 1' } },
        { ...good, arguments_schema: { type: 'string' } },
        { ...good, timeout_ms: 0 },
        { ...good, timeout_ms: 120001 },
        { url: good.url },
      ]) {
        expect(validHttp(bad), JSON.stringify(bad)).to.equal(false);
      }
    });

    it('accepts an MCP tool and rejects what does not fit', () => {
      expect(validMcp({ server_url: 'https://mcp.example.com/mcp', tool: 'search', headers: { 'X-Key': 'k' }, timeout_ms: 1000 })).to.equal(true);
      expect(validMcp({ server_url: 'https://mcp.example.com/mcp' })).to.equal(false);
      expect(validMcp({ server_url: 'ws://mcp.example.com/', tool: 'a' })).to.equal(false);
      expect(validMcp({ server_url: 'https://mcp.example.com/', tool: '' })).to.equal(false);
      expect(validMcp({ server_url: 'https://mcp.example.com/', tool: 'a', more: true })).to.equal(false);
    });

    it('lists what a schema cannot check: placeholders missing from arguments_schema, schemas that do not compile', () => {
      expect(httpToolConfigProblems({ method: 'GET', url: 'https://x.test/{id}', arguments_schema: { type: 'object', properties: { id: {} } } })).to.deep.equal([]);
      expect(httpToolConfigProblems({ method: 'GET', url: 'https://x.test/{id}', arguments_schema: { type: 'object', properties: {} } })).to.deep.equal([
        'url placeholder {id} is not a property of arguments_schema',
      ]);
      const [problem] = httpToolConfigProblems({ method: 'GET', url: 'https://x.test/', arguments_schema: { type: 'object', minProperties: 'two' } });
      expect(problem).to.match(/arguments_schema is not a usable JSON Schema/);
      expect(httpToolConfigProblems({ method: 'GET', url: 'https://{host}:99999/' })).to.have.length(1);
    });
  });
});
