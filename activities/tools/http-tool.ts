import { validateArguments } from './arguments-validator.js';
import { ToolUpstreamError } from './errors.js';
import { describeUrl, guardedFetch, type GuardedResponse } from './outbound-guard.js';
import type { HttpToolConfig, ToolCallOptions } from './types.js';
import { fillUrlTemplate, placeholderNames } from './url-template.js';

export { httpToolConfigProblems, httpToolConfigSchema, mcpToolConfigSchema } from './config-schemas.js';

export const DEFAULT_HTTP_TOOL_TIMEOUT_MS = 10_000;
const ERROR_SNIPPET_CHARS = 500;

/**
 * Calls an HTTP tool: checks the arguments against its schema, builds the request from its URL
 * template, sends it through the outbound guard, and answers the parsed JSON (or the text) of a 2xx.
 */
export async function callHttpTool(config: HttpToolConfig, args: Record<string, unknown>, options: ToolCallOptions): Promise<unknown> {
  const checked = validateArguments(config.arguments_schema, args);
  const url = fillUrlTemplate(config.url, checked);
  const placeholders = new Set(placeholderNames(config.url));
  const rest = Object.fromEntries(Object.entries(checked).filter(([name]) => !placeholders.has(name)));

  const headers: Record<string, string> = { accept: 'application/json, text/*;q=0.9, */*;q=0.8' };
  for (const [name, value] of Object.entries(config.headers ?? {})) headers[name.toLowerCase()] = value;
  let body: string | undefined;
  if (config.method === 'GET' || config.method === 'DELETE') {
    appendQuery(url, rest);
  } else {
    body = JSON.stringify(rest);
    headers['content-type'] ??= 'application/json';
  }

  const response = await guardedFetch(url, {
    method: config.method,
    headers,
    body,
    policy: options.policy,
    signal: options.signal,
    timeoutMs: config.timeout_ms ?? DEFAULT_HTTP_TOOL_TIMEOUT_MS,
  });
  if (response.status < 200 || response.status > 299) {
    throw new ToolUpstreamError(`${config.method} ${describeUrl(url)} answered ${response.status}: ${snippet(response.body)}`, {
      status: response.status,
      retryable: response.status >= 500 || response.status === 429 || response.status === 408,
    });
  }
  return result(response);
}

/** Arrays repeat the parameter (`tag=a&tag=b`); objects travel as JSON text; null and absent are left out. */
function appendQuery(url: URL, args: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(args)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      url.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
}

/** JSON when the server says so (text if it lies), else the text; an empty body is null. */
function result(response: GuardedResponse): unknown {
  if (response.body === '') return null;
  const type = response.headers.get('content-type') ?? '';
  if (/^application\/([\w.-]+\+)?json\b/i.test(type)) {
    try {
      return JSON.parse(response.body);
    } catch {
      return response.body;
    }
  }
  return response.body;
}

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  if (!flat) return '(empty body)';
  return flat.length > ERROR_SNIPPET_CHARS ? `${flat.slice(0, ERROR_SNIPPET_CHARS)}…` : flat;
}
