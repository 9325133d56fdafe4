import { expect } from 'chai';
import { OutboundRefusedError, OutboundTimeoutError, ToolUpstreamError } from '../activities/tools/errors.js';
import { callMcpTool, listMcpTools } from '../activities/tools/mcp-tool.js';
import type { ToolCallOptions } from '../activities/tools/types.js';
import { startMcpToolServer, type LocalMcpServer } from './support/tool-mcp-server.js';
import { failure } from './support/failure.js';

const allowed: ToolCallOptions = { policy: { allow: ['127.0.0.1'] } };

describe('tools: MCP tool', () => {
  let server: LocalMcpServer;
  before(async () => {
    server = await startMcpToolServer();
  });
  after(() => server.close());

  it('calls a tool and answers its structured content, then ends the session', async () => {
    const ended = server.endedSessions;
    const result = await callMcpTool({ server_url: server.url, tool: 'add' }, { a: 2, b: 40 }, allowed);
    expect(result).to.deep.equal({ sum: 42 });
    expect(server.endedSessions).to.equal(ended + 1);
  });

  it('answers the text content, joined, when there is no structured content', async () => {
    expect(await callMcpTool({ server_url: server.url, tool: 'shout' }, { text: 'hi' }, allowed)).to.equal('HI\n!');
  });

  it('sends the configured headers on every request', async () => {
    const before = server.requestHeaders.length;
    await callMcpTool({ server_url: server.url, tool: 'add', headers: { Authorization: 'Bearer mcp-key' } }, { a: 1, b: 1 }, allowed);
    const sent = server.requestHeaders.slice(before);
    expect(sent).not.to.be.empty;
    for (const headers of sent) expect(headers.authorization).to.equal('Bearer mcp-key');
  });

  it('is refused without the allow-list, before any request reaches the server', async () => {
    const before = server.requestHeaders.length;
    const err = await failure(callMcpTool({ server_url: server.url, tool: 'add' }, { a: 1, b: 2 }, { policy: { allow: [] } }));
    expect(err).to.be.instanceOf(OutboundRefusedError);
    expect(err.message).to.equal('refused: 127.0.0.1 is a loopback address; allow it with TOOL_HTTP_ALLOW_HOSTS');
    expect(server.requestHeaders.length).to.equal(before);
  });

  it('surfaces a result flagged isError as an error carrying the tool text', async () => {
    const err = await failure(callMcpTool({ server_url: server.url, tool: 'fail' }, {}, allowed));
    expect(err).to.be.instanceOf(ToolUpstreamError);
    expect(err.message).to.equal("MCP tool 'fail' reported an error: the tool broke");
    expect((err as ToolUpstreamError).retryable).to.equal(false);
  });

  it('fails an unknown tool with the server message', async () => {
    const err = await failure(callMcpTool({ server_url: server.url, tool: 'nope' }, {}, allowed));
    expect(err).to.be.instanceOf(ToolUpstreamError);
    expect(err.message).to.match(/^MCP server http:\/\/127\.0\.0\.1:\d+\/mcp: .*unknown tool nope/);
  });

  it('times out after timeout_ms', async () => {
    const err = await failure(callMcpTool({ server_url: server.url, tool: 'slow', timeout_ms: 300 }, { ms: 3000 }, allowed));
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    expect(err.message).to.match(/^MCP server http:\/\/127\.0\.0\.1:\d+\/mcp did not finish within 300 ms$/);
  });

  it('reports a server that is not there as a retryable upstream error', async () => {
    const err = await failure(callMcpTool({ server_url: 'http://127.0.0.1:9/mcp', tool: 'add' }, {}, allowed));
    expect(err).to.be.instanceOf(ToolUpstreamError);
    expect(err.message).to.match(/ECONNREFUSED/);
    expect((err as ToolUpstreamError).retryable).to.equal(true);
  });

  it('lists the tools with their descriptions and input schemas', async () => {
    const tools = await listMcpTools(server.url, allowed);
    expect(tools.map((tool) => tool.name)).to.deep.equal(['add', 'shout', 'fail', 'slow']);
    expect(tools[0]).to.deep.equal({
      name: 'add',
      description: 'Adds two numbers',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    });
    expect(await failure(listMcpTools(server.url, { policy: { allow: [] } }))).to.be.instanceOf(OutboundRefusedError);
  });
});
