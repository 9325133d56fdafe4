import type Koa from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { authenticate } from '../middleware/authenticate.js';
import { ACCESS_TOKEN_PREFIX, accessTokenCoversPath, findActiveAccessToken } from '../oauth/access-tokens.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, readBodyBytes } from '../middleware/json-body.js';
import type { AnyOperation, Caller } from '../operation.js';
import { dispatchToolCall, type ToolCaller } from './dispatch.js';
import { jsonRpcEnvelopeProblem } from './json-rpc-envelope.js';
import { DISPATCH_HEADER, dispatchedCaller, DispatchTickets } from './internal-router.js';
import { buildMcpTools, type McpToolSet } from './tools.js';
import { integerSetting } from '../../db/integer-settings.js';

/** Where the MCP server answers. */
export const MCP_PATH = '/mcp';
/** Its OAuth 2.0 Protected Resource Metadata (RFC 9728: the well-known prefix before the resource's path). */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The one OAuth scope: a standard key's reach. */
const SCOPES = ['api'];

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, X-Request-Id',
  'Access-Control-Expose-Headers': 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, X-Request-Id',
  'Access-Control-Max-Age': '600',
};

/** How long a streaming tool (startRun, streamRunEvents) collects events: MCP_STREAM_WAIT_MS, default 45 s (clients often time out at 60 s). */
export function streamWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('MCP_STREAM_WAIT_MS', env) ?? 45_000;
}

/**
 * `/mcp`: the API's operations as MCP tools over Streamable HTTP, stateless (a fresh server and
 * transport per POST, no sessions: any API process can answer any request), plus the RFC 9728 metadata
 * that points MCP clients at the OAuth authorization server. Mount before the operations router.
 */
export function mcpEndpoint(operations: AnyOperation[], deps: AppDeps): Koa.Middleware {
  const toolSet = buildMcpTools(operations);
  const tickets = new DispatchTickets();
  const dispatched = dispatchedCaller(tickets);
  const publicUrl = () => deps.publicUrl.replace(/\/+$/, '');

  // Not async on the way past: every request comes through here, and most go on to the operations.
  return (ctx, next) => {
    if (ctx.path === MCP_RESOURCE_METADATA_PATH) return resourceMetadata(ctx, publicUrl());
    if (ctx.path !== MCP_PATH) return dispatched(ctx, next);
    return serve(ctx);
  };

  async function serve(ctx: Koa.Context): Promise<void> {
    ctx.set(CORS_HEADERS);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    const metadataUrl = `${publicUrl()}${MCP_RESOURCE_METADATA_PATH}`;
    let authenticated: Caller;
    try {
      authenticated = await authenticate(ctx, deps.db, 'key');
      await checkAudience(ctx, deps);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'unauthorized') throw err;
      ctx.status = 401;
      ctx.body = err.toBody();
      ctx.set('WWW-Authenticate', challenge(metadataUrl, ctx.get('Authorization') ? err.message : undefined));
      return;
    }

    if (ctx.method !== 'POST') {
      // Stateless: there is no session to stream server-initiated messages on, or to end.
      ctx.status = 405;
      ctx.set('Allow', 'POST, OPTIONS');
      ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST.' }, id: null };
      return;
    }

    const body = await readBody(ctx);
    if ('error' in body) {
      ctx.status = body.status;
      ctx.body = { jsonrpc: '2.0', error: { code: body.code, message: body.error }, id: null };
      return;
    }

    const socket = ctx.req.socket;
    const host = socket.localAddress ?? '127.0.0.1';
    const caller: ToolCaller = {
      apiBase: `http://${host.includes(':') ? `[${host}]` : host}:${socket.localPort}`,
      credentials: () => ({ [DISPATCH_HEADER]: tickets.issue(authenticated) }),
      requestId: ctx.state.requestId as string | undefined,
    };
    const server = mcpServer(toolSet, caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(ctx.req, ctx.res, body.value);
    } catch (err) {
      // Koa no longer answers for this request (respond = false).
      console.error(`[mcp] ${ctx.state.requestId} failed:`, err);
      if (!ctx.res.headersSent) ctx.res.writeHead(500, { 'Content-Type': 'application/json' });
      ctx.res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'internal error' }, id: null }));
    }
  }
}

function mcpServer(toolSet: McpToolSet, caller: ToolCaller): Server {
  const server = new Server(
    { name: 'agent-platform', title: 'Agent Platform', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Each tool is one operation of the Agent Platform REST API (named by its operationId) and runs with your credential ' +
        'in your workspace. Path and query parameters are top-level arguments; the JSON request body is the `body` argument.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolSet.tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const route = toolSet.routes.get(request.params.name);
    if (!route) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const progressToken = request.params._meta?.progressToken;
    return dispatchToolCall(route, request.params.arguments ?? {}, caller, {
      signal: extra.signal,
      streamWaitMs: streamWaitMs(),
      onEvent:
        progressToken === undefined
          ? undefined
          : (event, count) =>
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress: count, message: String(event.type) } })
                .catch(() => undefined),
    });
  });
  return server;
}

/**
 * An OAuth access token must have been issued for this MCP server (RFC 8707 `resource` = `<PUBLIC_URL>/mcp`)
 * or for the whole service; one for another resource is refused as invalid_token. (authenticate() applies
 * the same rule by request path today; this keeps `/mcp` strict on its own.)
 */
async function checkAudience(ctx: Koa.Context, deps: AppDeps): Promise<void> {
  const credential = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization').trim())?.[1];
  if (!credential?.startsWith(ACCESS_TOKEN_PREFIX)) return;
  const token = await findActiveAccessToken(deps.db, credential);
  if (!token) throw new ApiError('unauthorized', 'unknown, expired or revoked access token');
  if (!accessTokenCoversPath(token, MCP_PATH)) throw new ApiError('unauthorized', `this access token was issued for ${token.resource}, not this MCP server`);
}

/** RFC 6750 §3 challenge with the RFC 9728 `resource_metadata`; an error only when a credential was presented. */
function challenge(metadataUrl: string, invalidTokenMessage: string | undefined): string {
  const params = [`resource_metadata="${metadataUrl}"`, `scope="${SCOPES.join(' ')}"`];
  if (invalidTokenMessage !== undefined) {
    params.push('error="invalid_token"', `error_description="${invalidTokenMessage.replace(/["\\]/g, "'")}"`);
  }
  return `Bearer ${params.join(', ')}`;
}

function resourceMetadata(ctx: Koa.Context, publicUrl: string): void {
  ctx.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, OPTIONS', 'Access-Control-Allow-Headers': '*' });
  if (ctx.method === 'OPTIONS') {
    ctx.status = 204;
    return;
  }
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    throw new ApiError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: GET, HEAD, OPTIONS`, {}, { Allow: 'GET, HEAD, OPTIONS' });
  }
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = {
    resource: `${publicUrl}${MCP_PATH}`,
    authorization_servers: [publicUrl],
    bearer_methods_supported: ['header'],
    scopes_supported: SCOPES,
    resource_name: 'Agent Platform MCP server',
  };
}

type ReadBody = { value: unknown } | { error: string; status: number; code: number };

/** The JSON-RPC body, at most JSON_BODY_LIMIT bytes, with a JSON-RPC envelope; its errors answer as JSON-RPC errors. */
async function readBody(ctx: Koa.Context): Promise<ReadBody> {
  let bytes: Buffer;
  try {
    bytes = await readBodyBytes(ctx);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'payload_too_large') throw err;
    return { error: err.message, status: 413, code: ErrorCode.InvalidRequest };
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { error: `Parse error: ${(err as Error).message}`, status: 400, code: ErrorCode.ParseError };
  }
  // A tool's arguments become a REST body, held to its depth; the JSON-RPC envelope (a batch, the
  // message, its params, the arguments) adds a few levels. Deeper would overflow JSON.stringify later.
  if (nestsDeeperThan(value, MAX_JSON_DEPTH + MCP_ENVELOPE_DEPTH)) {
    return { error: `the message nests deeper than ${MAX_JSON_DEPTH + MCP_ENVELOPE_DEPTH} levels`, status: 400, code: ErrorCode.InvalidRequest };
  }
  const problem = jsonRpcEnvelopeProblem(value);
  if (problem) return { error: `Invalid Request: ${problem}`, status: 400, code: ErrorCode.InvalidRequest };
  return { value };
}

const MCP_ENVELOPE_DEPTH = 8;
