import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { pipeline, Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, ToolError, ToolUpstreamError } from './errors.js';
import { assertAddressAllowed, assertHostNameAllowed } from './outbound-policy.js';
import type { OutboundPolicy } from './types.js';

/**
 * Outbound requests for tools, safe against SSRF. The destination is checked after DNS, on the very
 * addresses the socket may connect to (a custom `lookup`, so a name cannot resolve to a public
 * address for the check and a private one for the connection), and again on every redirect.
 */

export { OutboundRefusedError } from './errors.js';
export { outboundPolicyFromEnv } from './outbound-policy.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_REDIRECTS = 5;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of a host name; the system resolver (`dns.lookup`) unless a caller brings its own. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  policy: OutboundPolicy;
  signal?: AbortSignal;
  /** Default 1 MiB, counted after decompression. */
  maxResponseBytes?: number;
  /** `follow` (default) checks every hop again, at most MAX_REDIRECTS; `manual` answers the 3xx itself. */
  redirect?: 'follow' | 'manual';
  resolveHost?: HostResolver;
}

export interface GuardedStreamResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  /** The decoded body; it fails with ResponseTooLargeError once past `maxResponseBytes`. */
  body: Readable;
}

export interface GuardedFetchInit extends GuardedRequestInit {
  /** For the whole exchange: connection, redirects and body. Default 10 000 ms. */
  timeoutMs?: number;
}

export interface GuardedResponse {
  url: string;
  status: number;
  headers: Headers;
  body: string;
}

/** One request through the guard, its body read as text; the usual entry point. */
export async function guardedFetch(url: string | URL, init: GuardedFetchInit): Promise<GuardedResponse> {
  const timeoutMs = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  try {
    const response = await openGuardedRequest(url, { ...init, signal });
    const body = await readText(response, signal);
    return { url: response.url, status: response.status, headers: response.headers, body };
  } catch (err) {
    if (deadline.aborted && !init.signal?.aborted) {
      const method = (init.method ?? 'GET').toUpperCase();
      throw new OutboundTimeoutError(`${method} ${describeUrl(new URL(url))} timed out after ${timeoutMs} ms`, timeoutMs);
    }
    throw err;
  }
}

/** One request through the guard, its body left as a stream (for SSE and the MCP transport). No timeout of its own. */
export async function openGuardedRequest(url: string | URL, init: GuardedRequestInit): Promise<GuardedStreamResponse> {
  let target = httpUrl(url);
  let request: OutgoingRequest = {
    method: (init.method ?? 'GET').toUpperCase(),
    headers: outgoingHeaders(init.headers ?? {}),
    body: init.body,
  };
  for (let redirects = 0; ; redirects++) {
    const incoming = await send(target, request, init);
    const location = REDIRECT_STATUSES.has(incoming.statusCode ?? 0) ? incoming.headers.location : undefined;
    if (!location || init.redirect === 'manual') {
      return streamResponse(target, incoming, init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    }
    incoming.resume();
    if (redirects === MAX_REDIRECTS) {
      throw new ToolUpstreamError(`more than ${MAX_REDIRECTS} redirects, the last from ${describeUrl(target)}`, { retryable: false });
    }
    const next = redirectTarget(target, location);
    request = redirected(request, incoming.statusCode!, target, next);
    target = next;
  }
}

/** `https://host/path` without query, fragment or credentials: safe for messages and logs. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

interface OutgoingRequest {
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Node frames the message itself; a caller's Content-Length or Transfer-Encoding could only break it. Host
// comes from the URL the guard checked: one of the caller's own would name a virtual host it did not.
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);
// Credentials and API keys in headers were meant for the first origin; only these follow a redirect elsewhere.
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-language', 'content-type', 'user-agent']);

function httpUrl(url: string | URL): URL {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OutboundRefusedError(`refused: ${parsed.protocol} URLs are not allowed, only http and https`, parsed.hostname);
  }
  return parsed;
}

function outgoingHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!FRAMING_HEADERS.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}

function send(url: URL, request: OutgoingRequest, init: GuardedRequestInit): Promise<http.IncomingMessage> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  assertHostNameAllowed(init.policy, hostname);
  // Node connects to an IP literal without calling `lookup`, so a literal is checked here.
  if (net.isIP(hostname)) assertAddressAllowed(init.policy, hostname, hostname);
  const { signal } = init;
  signal?.throwIfAborted();

  return new Promise((resolve, reject) => {
    let incoming: http.IncomingMessage | undefined;
    const onAbort = () => {
      outgoing.destroy(abortReason(signal!));
      incoming?.destroy(abortReason(signal!));
    };
    const outgoing = (url.protocol === 'https:' ? https : http).request({
      protocol: url.protocol,
      hostname,
      port: url.port || undefined,
      path: url.pathname + url.search,
      method: request.method,
      headers: request.headers,
      auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
      // A pooled socket would skip `lookup`, and with it the check made under this request's policy.
      agent: false,
      lookup: guardedLookup(init.policy, hostname, init.resolveHost ?? systemResolver),
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.on('response', (response) => {
      incoming = response;
      response.once('close', () => signal?.removeEventListener('abort', onAbort));
      resolve(response);
    });
    outgoing.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? abortReason(signal) : upstreamError(err, `${request.method} ${describeUrl(url)} failed`));
    });
    outgoing.end(request.body);
  });
}

/** Resolves, refuses the whole name if any address is refused, and hands the connection only checked addresses. */
function guardedLookup(policy: OutboundPolicy, hostname: string, resolve: HostResolver): LookupFunction {
  return (name, options, callback) => {
    resolve(name)
      .then((addresses) => {
        if (addresses.length === 0) throw new ToolUpstreamError(`${name} has no address`, { retryable: true });
        for (const { address } of addresses) assertAddressAllowed(policy, hostname, address);
        return addresses;
      })
      .then(
        (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
  };
}

const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true });

function redirectTarget(from: URL, location: string): URL {
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    throw new ToolUpstreamError(`${describeUrl(from)} redirected to an invalid URL`, { retryable: false });
  }
  if (to.protocol !== 'http:' && to.protocol !== 'https:') {
    throw new OutboundRefusedError(`refused: ${from.host} redirected to a ${to.protocol} URL; only http and https are followed`, to.hostname);
  }
  return to;
}

/** The request to send to the redirect target, as the Fetch standard rewrites it. */
function redirected(request: OutgoingRequest, status: number, from: URL, to: URL): OutgoingRequest {
  const becomesGet = status === 303 ? request.method !== 'HEAD' : (status === 301 || status === 302) && request.method === 'POST';
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      ([name]) => (to.origin === from.origin || CROSS_ORIGIN_HEADERS.has(name)) && !(becomesGet && name.startsWith('content-')),
    ),
  );
  return { method: becomesGet ? 'GET' : request.method, headers, body: becomesGet ? undefined : request.body };
}

function streamResponse(url: URL, incoming: http.IncomingMessage, maxBytes: number): GuardedStreamResponse {
  if (Number(incoming.headers['content-length']) > maxBytes) {
    incoming.destroy();
    throw tooLarge(url, maxBytes);
  }
  const headers = new Headers();
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
    try {
      headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
    } catch {
      // A header the Fetch API cannot hold is dropped rather than failing the whole response.
    }
  }
  const decoder = decoderFor(incoming.headers['content-encoding']);
  if (decoder) {
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  const capped = capBytes(url, maxBytes);
  // pipeline destroys every stage on the first error, so the reader of `body` sees it.
  const body = decoder ? pipeline(incoming, decoder, capped, () => {}) : pipeline(incoming, capped, () => {});
  return { url: url.href, status: incoming.statusCode ?? 0, headers, body };
}

function decoderFor(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

function capBytes(url: URL, maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(tooLarge(url, maxBytes));
      else done(null, chunk);
    },
  });
}

function tooLarge(url: URL, maxBytes: number): ResponseTooLargeError {
  return new ResponseTooLargeError(`the response from ${url.host} is larger than the ${maxBytes}-byte limit for tool responses`, maxBytes);
}

async function readText(response: GuardedStreamResponse, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response.body) chunks.push(chunk as Buffer);
  } catch (err) {
    throw signal.aborted ? abortReason(signal) : upstreamError(err, `reading the response from ${describeUrl(new URL(response.url))} failed`);
  }
  const charset = /charset="?([^";\s]+)/i.exec(response.headers.get('content-type') ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(Buffer.concat(chunks));
  } catch {
    return new TextDecoder().decode(Buffer.concat(chunks));
  }
}

function upstreamError(err: unknown, context: string): Error {
  if (err instanceof ToolError) return err;
  return new ToolUpstreamError(`${context}: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'aborted'));
}
