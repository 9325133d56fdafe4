import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../json-schema/types.js';
import { OutboundTimeoutError, ToolConfigError, ToolError, ToolUpstreamError } from './errors.js';
import { guardedWebFetch, type WebFetch } from './guarded-web-fetch.js';
import { describeUrl } from './outbound-guard.js';
import type { McpToolConfig, ToolCallOptions } from './types.js';

export { mcpToolConfigSchema } from './config-schemas.js';

/** Longer than an HTTP tool's: one call is several exchanges (initialize, call, end of session). */
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 30_000;
const CLIENT_INFO = { name: 'agent-platform', version: '0.1.0' };
const MAX_TOOL_LIST_PAGES = 20;

export interface McpToolDescription {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

export interface McpSessionOptions extends ToolCallOptions {
  headers?: Record<string, string>;
  /** For the whole session. Default 30 000 ms. */
  timeoutMs?: number;
}

/**
 * Calls one tool of an MCP server (Streamable HTTP) in a session of its own, every request through
 * the outbound guard. Answers the tool's structured content if it has any, else its text; a result
 * flagged `isError` throws a ToolUpstreamError carrying the tool's text.
 */
export async function callMcpTool(config: McpToolConfig, args: Record<string, unknown>, options: ToolCallOptions): Promise<unknown> {
  const settings = { ...options, headers: config.headers, timeoutMs: config.timeout_ms };
  return withMcpClient(config.server_url, settings, async (client, request) => {
    const result = await client.callTool({ name: config.tool, arguments: args }, undefined, request);
    // Servers on the 2024-10-07 protocol answer `toolResult` instead of content.
    if ('toolResult' in result) return result.toolResult;
    return toolOutput(config.tool, result as CallToolResult);
  });
}

/** The server's tools, with the input schemas a tool configuration can be checked against. */
export async function listMcpTools(serverUrl: string, options: McpSessionOptions): Promise<McpToolDescription[]> {
  return withMcpClient(serverUrl, options, async (client, request) => {
    const tools: McpToolDescription[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_LIST_PAGES; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, request);
      for (const tool of result.tools) {
        tools.push({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: tool.inputSchema });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  });
}

async function withMcpClient<T>(
  serverUrl: string,
  options: McpSessionOptions,
  work: (client: Client, request: RequestOptions) => Promise<T>,
): Promise<T> {
  const url = parseServerUrl(serverUrl);
  const timeoutMs = options.timeoutMs ?? DEFAULT_MCP_TOOL_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;

  // The SDK wraps what its fetch throws; the guard's own error (refused, too large) is the one to report.
  let guardError: ToolError | undefined;
  const guarded = guardedWebFetch({ policy: options.policy, signal });
  const fetch: WebFetch = async (input, init) => {
    try {
      return await guarded(input, init);
    } catch (err) {
      if (err instanceof ToolError) guardError ??= err;
      throw err;
    }
  };
  const transport = new StreamableHTTPClientTransport(url, { fetch, requestInit: { headers: options.headers } });
  const client = new Client(CLIENT_INFO);
  // The SDK's own request timeout stays behind our deadline, so a slow server reads as our timeout.
  const request: RequestOptions = { signal, timeout: timeoutMs + 1_000 };
  try {
    await client.connect(transport, request);
    return await work(client, request);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (deadline.aborted) throw new OutboundTimeoutError(`MCP server ${describeUrl(url)} did not finish within ${timeoutMs} ms`, timeoutMs);
    throw guardError ?? upstreamError(url, err);
  } finally {
    await endSession(client, transport, signal);
  }
}

function parseServerUrl(serverUrl: string): URL {
  try {
    return new URL(serverUrl);
  } catch {
    throw new ToolConfigError(`the MCP server_url is not a valid URL`);
  }
}

/** Ends the server's session politely when there is time left, then closes the client. */
async function endSession(client: Client, transport: StreamableHTTPClientTransport, signal: AbortSignal): Promise<void> {
  try {
    if (transport.sessionId && !signal.aborted) await transport.terminateSession();
  } catch {
    // The server may not support ending sessions, or may be gone; either way nothing is left to do.
  }
  await client.close().catch(() => {});
}

function toolOutput(tool: string, result: CallToolResult): unknown {
  const text = result.content.map(contentText).join('\n');
  if (result.isError) {
    throw new ToolUpstreamError(`MCP tool '${tool}' reported an error: ${text || '(no message)'}`, { retryable: false });
  }
  return result.structuredContent ?? text;
}

/** Text as is; other content named, since a model cannot read base64 images here. */
function contentText(item: CallToolResult['content'][number]): string {
  switch (item.type) {
    case 'text':
      return item.text;
    case 'resource':
      return 'text' in item.resource ? item.resource.text : `[resource ${item.resource.uri}]`;
    case 'resource_link':
      return `[resource ${item.uri}]`;
    default:
      return `[${item.type} ${item.mimeType}]`;
  }
}

function upstreamError(url: URL, err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // Protocol errors (unknown tool, bad params) and 4xx answers will not change on a retry.
  let retryable = true;
  if (err instanceof McpError) retryable = false;
  else if (err instanceof StreamableHTTPError) retryable = (err.code ?? 500) >= 500 || err.code === 429;
  return new ToolUpstreamError(`MCP server ${describeUrl(url)}: ${message}`, { retryable, cause: err });
}
