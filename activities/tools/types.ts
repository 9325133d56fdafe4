import type { JsonSchema } from '../json-schema/types.js';

/** An HTTP tool: a request built from the call's arguments. */
export interface HttpToolConfig {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** URL template; `{name}` is replaced by the URL-encoded argument `name`. */
  url: string;
  headers?: Record<string, string>;
  /** JSON Schema the arguments must satisfy; also what the model is shown. */
  arguments_schema?: JsonSchema;
  /** Default 10 000 ms. */
  timeout_ms?: number;
}

/** A tool served by an MCP server over Streamable HTTP. */
export interface McpToolConfig {
  server_url: string;
  /** The tool's name on that server. */
  tool: string;
  headers?: Record<string, string>;
  timeout_ms?: number;
}

/** Which otherwise-refused destinations an operator allows (TOOL_HTTP_ALLOW_HOSTS). */
export interface OutboundPolicy {
  /** Host names, IP addresses or CIDR ranges, e.g. `localhost`, `127.0.0.1`, `10.0.0.0/8`. */
  allow: string[];
}

export interface ToolCallOptions {
  signal?: AbortSignal;
  policy: OutboundPolicy;
}
