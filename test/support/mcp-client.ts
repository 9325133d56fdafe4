import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { testPlatform } from './global.js';

/** The platform's MCP endpoint. */
export function mcpUrl(): URL {
  return new URL('/mcp', testPlatform().apiUrl);
}

/** An official SDK client connected to `/mcp` with `credential` as its bearer token. */
export async function mcpClient(credential: string): Promise<Client> {
  const client = new Client({ name: 'agent-platform-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } });
  await client.connect(transport);
  return client;
}

/** A tool call's answer: its structured content, or for a tool error the `{status, error}` its text carries. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; body: any }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.find((item) => item.type === 'text')?.text;
  return { isError: result.isError === true, body: result.isError ? JSON.parse(text ?? 'null') : (result.structuredContent ?? JSON.parse(text ?? 'null')) };
}
