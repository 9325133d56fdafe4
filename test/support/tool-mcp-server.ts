import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface LocalMcpServer {
  /** `http://<host>:<port>/mcp` */
  url: string;
  /** Sessions the client ended with DELETE. */
  endedSessions: number;
  /** Headers of every HTTP request, to check a tool's configured headers arrive. */
  requestHeaders: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

const TOOLS = [
  {
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: { type: 'object' as const, properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
  { name: 'shout', description: 'Upper-cases text', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } } },
  { name: 'fail', description: 'Always reports an error', inputSchema: { type: 'object' as const } },
  { name: 'slow', description: 'Answers after `ms` milliseconds', inputSchema: { type: 'object' as const, properties: { ms: { type: 'number' } } } },
];

/**
 * A real MCP server over Streamable HTTP (stateful sessions, as most servers run), on 127.0.0.1 port 0.
 * It uses the SDK's low-level `Server` with plain JSON Schemas; `McpServer.registerTool` would need
 * zod, which this project does not depend on directly.
 */
export async function startMcpToolServer(host = '127.0.0.1'): Promise<LocalMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state: LocalMcpServer = { url: '', endedSessions: 0, requestHeaders: [], close: async () => {} };

  const httpServer = http.createServer((req, res) => {
    state.requestHeaders.push(req.headers);
    void route(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      if (req.method === 'DELETE') state.endedSessions++;
      return existing.handleRequest(req, res);
    }
    if (req.method !== 'POST' || sessionId) {
      res.writeHead(404).end();
      return;
    }
    const body: unknown = JSON.parse(await readBody(req));
    if (!isInitializeRequest(body)) {
      res.writeHead(400).end('initialize first');
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await toolServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve) => httpServer.listen(0, host, resolve));
  const { port } = httpServer.address() as AddressInfo;
  state.url = `http://${host}:${port}/mcp`;
  state.close = async () => {
    await Promise.all([...sessions.values()].map((transport) => transport.close()));
    httpServer.closeAllConnections();
    await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  };
  return state;
}

function toolServer(): Server {
  const server = new Server({ name: 'test-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'add': {
        const sum = Number(args.a) + Number(args.b);
        return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
      }
      case 'shout':
        return { content: [{ type: 'text', text: String(args.text).toUpperCase() }, { type: 'text', text: '!' }] };
      case 'fail':
        return { content: [{ type: 'text', text: 'the tool broke' }], isError: true };
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
        return { content: [{ type: 'text', text: 'done' }] };
      default:
        throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    }
  });
  return server;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
