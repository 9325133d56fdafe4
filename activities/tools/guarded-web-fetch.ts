import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { openGuardedRequest, type HostResolver } from './outbound-guard.js';
import type { OutboundPolicy } from './types.js';

export interface GuardedWebFetchOptions {
  policy: OutboundPolicy;
  /** Aborts every request made through this fetch, on top of each request's own signal. */
  signal?: AbortSignal;
  maxResponseBytes?: number;
  resolveHost?: HostResolver;
}

export type WebFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

// The Fetch standard gives these answers no body.
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` whose every request goes through the outbound guard, for libraries that take a custom
 * fetch (the MCP SDK's transports). Bodies stream, so server-sent events arrive as they are sent.
 */
export function guardedWebFetch(options: GuardedWebFetchOptions): WebFetch {
  return async (url, init) => {
    // The standard Request normalizes headers, body and redirect mode exactly as fetch would.
    const request = new Request(url, init);
    const signal = options.signal ? AbortSignal.any([request.signal, options.signal]) : request.signal;
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const response = await openGuardedRequest(request.url, {
      method: request.method,
      headers: Object.fromEntries(request.headers),
      body,
      policy: options.policy,
      signal,
      maxResponseBytes: options.maxResponseBytes,
      resolveHost: options.resolveHost,
      redirect: request.redirect === 'follow' ? 'follow' : 'manual',
    });
    if (request.redirect === 'error' && response.status >= 300 && response.status < 400 && response.headers.has('location')) {
      response.body.destroy();
      throw new TypeError(`fetch failed: ${request.url} redirected, and redirects were refused`);
    }
    if (NULL_BODY_STATUSES.has(response.status) || request.method === 'HEAD') {
      response.body.destroy();
      return new Response(null, { status: response.status, headers: response.headers });
    }
    const stream = Readable.toWeb(response.body) as NodeReadableStream<Uint8Array>;
    return new Response(stream as unknown as ReadableStream<Uint8Array>, { status: response.status, headers: response.headers });
  };
}
