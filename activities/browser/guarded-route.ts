import type { BrowserContext, Request, Route } from 'playwright-core';
import { OutboundRefusedError, ToolError } from '../tools/errors.js';
import { describeUrl, MAX_REDIRECTS, openGuardedRequest, type GuardedStreamResponse } from '../tools/outbound-guard.js';
import type { OutboundPolicy } from '../tools/types.js';

/** One response a page may load, after decompression: pages are text, but scripts and styles add up. */
export const MAX_BROWSER_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Every response of one call together. */
export const MAX_BROWSER_TOTAL_BYTES = 25 * 1024 * 1024;
/** Requests of one call (documents, frames, sub-resources); a page past it is making work, not content. */
export const MAX_BROWSER_REQUESTS = 300;
/** A request body a page may send (a form, an XHR). */
export const MAX_BROWSER_REQUEST_BODY_BYTES = 2 * 1024 * 1024;
/** A page can make any number of refused requests; the first few are kept for the model. */
export const MAX_BLOCKED_KEPT = 20;

/** A request the guard did not let through, for the tool's answer. */
export interface BlockedRequest {
  url: string;
  reason: string;
}

export interface GuardedRouteOptions {
  policy: OutboundPolicy;
  signal: AbortSignal;
  /**
   * The saved sign-in's origin: with one, cookies are sent to this origin only (cookies ignore ports and
   * may cover subdomains); without, to any origin, as there are only those the call's pages set. Always
   * first-party only.
   */
  signInOrigin?: string;
  blocked: BlockedRequest[];
  /** The main document was refused (its reason is the call's error). */
  onDocumentRefused: (refusal: BlockedRequest) => void;
  /** The main document redirected: the caller opens `location`. */
  onRedirect: (location: string) => void;
  /** The page went past a limit of the whole call: the call fails with `err`. */
  fail: (err: ToolError) => void;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const SIMPLE_METHODS = new Set(['GET', 'HEAD', 'POST']);
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);
// Headers Chromium sets itself or that CORS lets a page set without a preflight; any other needs one.
const NO_PREFLIGHT_HEADERS = new Set([
  'accept', 'accept-language', 'content-language', 'content-type', 'range', 'user-agent', 'referer', 'origin', 'accept-encoding',
  'cookie', 'host', 'connection', 'content-length', 'priority', 'upgrade-insecure-requests', 'dnt', 'pragma', 'cache-control',
]);

/**
 * Serves every request of `context` through the outbound guard (activities/tools/outbound-guard.ts):
 * the guard resolves the name, refuses private, loopback and metadata addresses unless the operator
 * allows them, and connects to the address it checked, so DNS rebinding cannot steer Chromium
 * elsewhere. The response's Set-Cookie reach the context through the fulfilled response.
 *
 * Cookies: an intercepted request carries none of its own, and the route cannot tell a request's
 * credentials mode, so it adds the context's cookies only where a browser surely would: first-party
 * (the main document, or from frames all on the URL's origin), not cross-origin, and with a sign-in
 * only to the sign-in's exact origin. CORS: Playwright grants any cross-origin request whose fulfilled answer has no
 * Access-Control-Allow-Origin (and answers preflights allow-all before the route sees them), so the
 * route names the URL's own origin there, which Chromium then refuses, and checks a cross-origin
 * request that needs a preflight against the upstream's own answer to one.
 *
 * Redirects: Chromium does not hand the hop after a fulfilled redirect to the route (it would go to the
 * dead proxy). The main document's are opened by the caller (`onRedirect`; the hop is answered with an
 * empty page carrying its Set-Cookie), so the page's address is where it ended up. A frame's are
 * followed here within its origin only (else its content would run as the origin it left); a
 * sub-resource's by the guard, each hop checked, with Set-Cookie dropped from another origin's answer.
 */
export async function routeThroughGuard(context: BrowserContext, options: GuardedRouteOptions): Promise<void> {
  let totalBytes = 0;
  let requests = 0;
  // A host refused once in this call is refused again without a lookup (or a log line) per request.
  const refusedHosts = new Map<string, string>();
  const refuse = (url: URL, reason: string, document: boolean) => {
    const refusal = { url: describeUrl(url), reason };
    if (document) options.onDocumentRefused(refusal);
    else if (options.blocked.length < MAX_BLOCKED_KEPT) options.blocked.push(refusal);
  };

  await context.route('**/*', async (route) => {
    const request = route.request();
    const url = request.url();
    if (!url.startsWith('http:') && !url.startsWith('https:')) return abort(route);
    const target = new URL(url);
    const document = isMainDocument(request);
    if (++requests > MAX_BROWSER_REQUESTS) {
      options.fail(new ToolError(`the page made more than ${MAX_BROWSER_REQUESTS} requests, the limit of one browser call`, false));
      return abort(route);
    }
    try {
      const known = refusedHosts.get(target.hostname);
      if (known !== undefined) throw new OutboundRefusedError(known, target.hostname);
      const body = request.postDataBuffer() ?? undefined;
      if (body && body.length > MAX_BROWSER_REQUEST_BODY_BYTES) {
        throw new ToolError(`refused: a request body of more than ${MAX_BROWSER_REQUEST_BODY_BYTES} bytes`, false);
      }
      const headers = await request.allHeaders();
      delete headers.cookie;
      // Only encodings the guard decodes, so its size limits count the decoded bytes (Chromium also offers zstd).
      if (headers['accept-encoding'] !== undefined) headers['accept-encoding'] = 'gzip, deflate, br';
      const requestOrigin = headers.origin;
      const crossOrigin = requestOrigin !== undefined && requestOrigin !== target.origin;
      if (crossOrigin && needsPreflight(request.method(), headers)) await preflight(target, request.method(), headers, options);
      const send = async (hop: URL, method: string, hopBody: Buffer | undefined, redirect: 'manual' | 'follow') => {
        const ownSite = options.signInOrigin === undefined || hop.origin === options.signInOrigin;
        const cookies = !crossOrigin && ownSite && isFirstParty(request, hop.origin) ? await context.cookies(hop.href) : [];
        if (cookies.length) headers.cookie = cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
        else delete headers.cookie;
        return openGuardedRequest(hop, {
          method,
          headers,
          body: hopBody,
          policy: options.policy,
          signal: options.signal,
          redirect,
          maxResponseBytes: MAX_BROWSER_RESPONSE_BYTES,
        });
      };

      let response: GuardedStreamResponse;
      if (document) {
        response = await send(target, request.method(), body, 'manual');
        const location = redirectLocation(response, target);
        if (location !== undefined) {
          response.body.destroy();
          options.onRedirect(location.href);
          const hop: Record<string, string> = { 'content-type': 'text/html' };
          const setCookies = response.headers.getSetCookie();
          if (setCookies.length) hop['set-cookie'] = setCookies.join('\n');
          return await route.fulfill({ status: 200, headers: hop, body: '' });
        }
      } else if (request.isNavigationRequest()) {
        response = await followFrameRedirects(target, request.method(), body, send);
      } else {
        response = await send(target, request.method(), body, 'follow');
      }

      const chunks: Buffer[] = [];
      for await (const chunk of response.body) {
        totalBytes += (chunk as Buffer).length;
        if (totalBytes > MAX_BROWSER_TOTAL_BYTES) {
          const err = new ToolError(`the page loaded more than ${MAX_BROWSER_TOTAL_BYTES} bytes, the limit of one browser call`, false);
          options.fail(err);
          throw err;
        }
        chunks.push(chunk as Buffer);
      }
      const fulfilled: Record<string, string> = {};
      for (const [name, value] of response.headers) if (name !== 'set-cookie' && name !== 'content-length') fulfilled[name] = value;
      // Playwright takes several Set-Cookie headers as one value, a line each; another origin's (after a
      // redirect the guard followed) would be stored under this URL's.
      const setCookies = new URL(response.url).origin === target.origin ? response.headers.getSetCookie() : [];
      if (setCookies.length) fulfilled['set-cookie'] = setCookies.join('\n');
      if (crossOrigin && !response.headers.has('access-control-allow-origin')) fulfilled['access-control-allow-origin'] = target.origin;
      await route.fulfill({ status: response.status, headers: fulfilled, body: Buffer.concat(chunks) });
    } catch (err) {
      if (!options.signal.aborted) {
        const reason = err instanceof Error ? err.message : String(err);
        if (err instanceof OutboundRefusedError && err.host === target.hostname) refusedHosts.set(target.hostname, reason);
        refuse(target, reason, document);
      }
      await abort(route);
    }
  });
}

type Send = (hop: URL, method: string, body: Buffer | undefined, redirect: 'manual' | 'follow') => Promise<GuardedStreamResponse>;

/** A frame's redirects within its origin; one to another origin is refused. */
async function followFrameRedirects(target: URL, method: string, body: Buffer | undefined, send: Send): Promise<GuardedStreamResponse> {
  let hop = target;
  for (let redirects = 0; ; redirects++) {
    const response = await send(hop, method, body, 'manual');
    const location = redirectLocation(response, hop);
    if (location === undefined) return response;
    response.body.destroy();
    if (location.origin !== target.origin) {
      throw new ToolError(`refused: a frame of ${describeUrl(target)} redirected to another origin, ${location.origin}`, false);
    }
    if (redirects === MAX_REDIRECTS) throw new ToolError(`refused: more than ${MAX_REDIRECTS} redirects, the last from ${describeUrl(hop)}`, false);
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    hop = location;
  }
}

function redirectLocation(response: GuardedStreamResponse, from: URL): URL | undefined {
  const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
  return location !== null && URL.canParse(location, from.href) ? new URL(location, from) : undefined;
}

function needsPreflight(method: string, headers: Record<string, string>): boolean {
  if (!SIMPLE_METHODS.has(method)) return true;
  const contentType = headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== undefined && !SIMPLE_CONTENT_TYPES.has(contentType)) return true;
  return Object.keys(headers).some((name) => !NO_PREFLIGHT_HEADERS.has(name) && !name.startsWith('sec-'));
}

/**
 * Asks the upstream itself what Playwright answered allow-all in its place: a cross-origin request
 * that needs a preflight is sent only when the upstream's answer allows its origin, method and headers.
 */
async function preflight(target: URL, method: string, headers: Record<string, string>, options: GuardedRouteOptions): Promise<void> {
  const origin = headers.origin!;
  const authorHeaders = Object.keys(headers).filter((name) => !NO_PREFLIGHT_HEADERS.has(name) && !name.startsWith('sec-')).sort();
  const response = await openGuardedRequest(target, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      ...(authorHeaders.length && { 'access-control-request-headers': authorHeaders.join(',') }),
      ...(headers['user-agent'] && { 'user-agent': headers['user-agent'] }),
    },
    policy: options.policy,
    signal: options.signal,
    redirect: 'manual',
    maxResponseBytes: 64 * 1024,
  });
  response.body.destroy();
  const list = (name: string) => (response.headers.get(name) ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);
  const allowOrigin = response.headers.get('access-control-allow-origin')?.trim();
  const methods = list('access-control-allow-methods');
  const allowed = list('access-control-allow-headers');
  const ok =
    response.status >= 200 && response.status < 300 &&
    (allowOrigin === origin || allowOrigin === '*') &&
    (SIMPLE_METHODS.has(method) || methods.includes(method.toLowerCase()) || methods.includes('*')) &&
    authorHeaders.every((name) => allowed.includes(name) || allowed.includes('*'));
  if (!ok) throw new ToolError(`refused: ${target.origin} does not allow this cross-origin request from ${origin} (CORS preflight)`, false);
}

function isMainDocument(request: Request): boolean {
  if (!request.isNavigationRequest()) return false;
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return false; // a request of a worker has no frame
  }
}

/**
 * A request the sign-in's site makes of itself: the main document, or one whose frame and every frame
 * above it are on `origin` (a navigating frame's own address is the one it leaves, so it is skipped).
 * A service worker's request has no frame, and gets no cookies.
 */
function isFirstParty(request: Request, origin: string): boolean {
  let frame;
  try {
    frame = request.frame();
  } catch {
    return false;
  }
  if (request.isNavigationRequest() && frame.parentFrame() === null) return true;
  for (let current = request.isNavigationRequest() ? frame.parentFrame() : frame; current; current = current.parentFrame()) {
    if (!URL.canParse(current.url()) || new URL(current.url()).origin !== origin) return false;
  }
  return true;
}

async function abort(route: Route): Promise<void> {
  // The page or context may be closing (the time limit); nothing is left to answer.
  await route.abort('blockedbyclient').catch(() => {});
}
