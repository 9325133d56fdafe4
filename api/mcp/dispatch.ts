import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BODY_ARGUMENT, type ToolRoute } from './tools.js';

/** The caller of a tool call, as its HTTP request to `/mcp` presented itself. */
export interface ToolCaller {
  /** Where this API process answers HTTP, e.g. `http://127.0.0.1:8080` (the address the MCP request arrived on). */
  apiBase: string;
  /** Headers that authenticate one request as the caller (a dispatch ticket: internal-router.ts). */
  credentials(): Record<string, string>;
  requestId?: string;
}

export interface DispatchOptions {
  signal?: AbortSignal;
  /** How long a streaming operation's events are collected before answering what has arrived. */
  streamWaitMs: number;
  /** Called for every collected event of a stream (progress notifications). */
  onEvent?: (event: Record<string, unknown>, count: number) => void;
}

/**
 * Executes a tool call as the REST request it stands for, sent over HTTP to this very API process as the
 * caller (internal-router.ts): access levels, validation, tenancy and rate limits apply as they do over
 * REST. A 2xx JSON answer becomes `structuredContent` (and its text); anything else is a tool error
 * whose text is `{"status": ..., "error": {...}}`.
 */
export async function dispatchToolCall(route: ToolRoute, args: Record<string, unknown>, caller: ToolCaller, options: DispatchOptions): Promise<CallToolResult> {
  const request = buildRequest(route, args);
  if ('error' in request) return errorResult(400, { error: { code: 'invalid_request', message: request.error, fields: request.fields } });

  const headers: Record<string, string> = { ...caller.credentials(), accept: route.streams ? 'text/event-stream, application/json' : 'application/json' };
  if (caller.requestId) headers['x-request-id'] = caller.requestId;
  if (request.body !== undefined) headers['content-type'] = 'application/json';

  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    const response = await fetch(caller.apiBase + request.path, {
      method: route.method.toUpperCase(),
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: controller.signal,
    });
    const contentType = response.headers.get('content-type') ?? '';
    if (response.ok && contentType.startsWith('text/event-stream') && response.body) {
      return await collectStream(response.body, controller, options, typeof args.runId === 'string' ? args.runId : null);
    }
    const text = await response.text();
    const body = contentType.includes('json') && text ? parseJson(text) : text;
    if (!response.ok) return errorResult(response.status, body);
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body as Record<string, unknown> };
    }
    return { content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body) }] };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    controller.abort();
  }
}

interface BuiltRequest {
  path: string;
  body: unknown;
}

function buildRequest(route: ToolRoute, args: Record<string, unknown>): BuiltRequest | { error: string; fields: { field: string; message: string }[] } {
  const known = new Set([...route.pathParams, ...route.queryParams, ...(route.hasBody ? [BODY_ARGUMENT] : [])]);
  const fields: { field: string; message: string }[] = [];
  for (const name of Object.keys(args)) {
    if (!known.has(name)) fields.push({ field: name, message: `unknown argument; ${route.operationId} takes ${[...known].join(', ') || 'no arguments'}` });
  }
  let path = route.path;
  for (const name of route.pathParams) {
    const value = args[name];
    if ((typeof value !== 'string' && typeof value !== 'number') || value === '') {
      fields.push({ field: name, message: value === undefined ? 'required' : 'must be a non-empty string' });
      continue;
    }
    const segmentProblem = pathSegmentProblem(String(value));
    if (segmentProblem) {
      fields.push({ field: name, message: segmentProblem });
      continue;
    }
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const query = new URLSearchParams();
  for (const name of route.queryParams) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = typeof item === 'object' ? JSON.stringify(item) : String(item);
      const problem = textProblem(text);
      if (problem) fields.push({ field: name, message: problem });
      else query.append(name, text);
    }
  }
  if (fields.length > 0) return { error: `invalid arguments for ${route.operationId}`, fields };
  const search = query.toString();
  return { path: search ? `${path}?${search}` : path, body: route.hasBody ? args[BODY_ARGUMENT] : undefined };
}

/**
 * Why a value cannot be one path segment: `.` and `..` are resolved away by URL parsing (`documentId: ".."`
 * would address the knowledge base itself), and a `/` would be a segment boundary to any proxy between.
 */
function pathSegmentProblem(value: string): string | undefined {
  if (value === '.' || value === '..') return `must not be '${value}'`;
  if (value.includes('/')) return "must not contain '/'";
  return textProblem(value);
}

/** A lone surrogate cannot be put in a URL (encodeURIComponent throws; URLSearchParams makes it U+FFFD). */
function textProblem(value: string): string | undefined {
  return value.isWellFormed() ? undefined : 'must be well-formed Unicode text (it has a lone surrogate)';
}

function errorResult(status: number, body: unknown): CallToolResult {
  const detail = body && typeof body === 'object' && !Array.isArray(body) ? body : { error: { message: String(body) } };
  return { content: [{ type: 'text', text: JSON.stringify({ status, ...detail }) }], isError: true };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Reads Server-Sent Events until the stream ends or `streamWaitMs` passes. Token deltas are counted,
 * not kept: `message.completed` carries each turn's whole text.
 */
async function collectStream(
  stream: ReadableStream<Uint8Array>,
  controller: AbortController,
  options: DispatchOptions,
  knownRunId: string | null,
): Promise<CallToolResult> {
  const events: Record<string, unknown>[] = [];
  let omittedDeltas = 0;
  let lastSeq = 0;
  let runId = knownRunId;
  let ended = false;
  const timer = setTimeout(() => controller.abort(new Error('stream wait over')), options.streamWaitMs);
  try {
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const data = frame
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (!data) continue; // a `: ping` comment
        const event = parseJson(data);
        if (!event || typeof event !== 'object') continue;
        const record = event as Record<string, unknown>;
        if (typeof record.seq === 'number') lastSeq = record.seq;
        if (runId === null && typeof record.run_id === 'string') runId = record.run_id;
        if (record.type === 'message.delta') {
          omittedDeltas++;
          continue;
        }
        events.push(record);
        options.onEvent?.(record, events.length);
      }
    }
  } catch (err) {
    // The wait ran out: answer what arrived. A cancelled MCP request has nobody to answer.
    if (options.signal?.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  const result: Record<string, unknown> = { run_id: runId, events, ended, last_seq: lastSeq, omitted_deltas: omittedDeltas };
  if (!ended) {
    result.note = `the stream was still open after ${Math.round(options.streamWaitMs / 1000)} s; the run goes on: follow it with getRun or streamRunEvents (after: ${lastSeq})`;
  }
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
}
