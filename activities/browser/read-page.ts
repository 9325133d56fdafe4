import { OutboundRefusedError, OutboundTimeoutError, ToolError, ToolUpstreamError } from '../tools/errors.js';
import { describeUrl, MAX_REDIRECTS } from '../tools/outbound-guard.js';
import type { OutboundPolicy } from '../tools/types.js';
import { launchToolChromium, type ToolChromium } from './chromium.js';
import { routeThroughGuard, type BlockedRequest } from './guarded-route.js';
import { takeBrowserSlot } from './launch-slots.js';
import { pageToMarkdown } from './page-markdown.js';
import type { StorageState } from './storage-state.js';

export interface ReadPageOptions {
  policy: OutboundPolicy;
  /** For the whole call: waiting for a free browser, launching Chromium, loading the page and reading it. */
  timeoutMs: number;
  maxChars: number;
  /** A saved sign-in: cookies and local storage to start from, and its origin (the only one its cookies go to). */
  signIn?: { origin: string; storageState: StorageState };
  signal?: AbortSignal;
}

export interface PageReading {
  /** Where the page ended up, after redirects (without query or fragment). */
  url: string;
  status: number | null;
  title: string;
  markdown: string;
  /** The page's Markdown was longer than `max_chars` and was cut. */
  truncated: boolean;
  /** Sub-requests the outbound guard refused or that failed (the page itself loaded), the first 20. */
  blocked: BlockedRequest[];
}

/** Once the page's own document has loaded, how long its scripts get to settle before it is read. */
const SETTLE_MS = 2000;

/**
 * Opens `url` in a Chromium of its own, in a fresh context (a saved sign-in's state, if given), with
 * every request through the outbound guard, downloads refused and popups closed, and answers the page
 * as Markdown.
 */
export async function readPage(url: string, options: ReadPageOptions): Promise<PageReading> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new OutboundRefusedError(`refused: ${target.protocol} URLs are not allowed, only http and https`, target.hostname);
  }
  const deadline = AbortSignal.timeout(options.timeoutMs);
  // A limit of the whole call that the page went past ends the call with its own error.
  const limit = new AbortController();
  let limitError: ToolError | undefined;
  const fail = (err: ToolError) => {
    limitError ??= err;
    limit.abort(err);
  };
  const signal = AbortSignal.any([deadline, limit.signal, ...(options.signal ? [options.signal] : [])]);
  const started = Date.now();
  const left = () => Math.max(1, options.timeoutMs - (Date.now() - started));

  let chromium: ToolChromium | undefined;
  let giveBackSlot: (() => void) | undefined;
  const closeBrowser = () => chromium?.close();
  signal.addEventListener('abort', closeBrowser, { once: true });
  const blocked: BlockedRequest[] = [];
  let documentRefusal: BlockedRequest | undefined;
  try {
    giveBackSlot = await takeBrowserSlot(signal);
    chromium = await launchToolChromium(left());
    signal.throwIfAborted();
    const context = await chromium.browser.newContext({
      acceptDownloads: false,
      serviceWorkers: 'block',
      javaScriptEnabled: true,
      ...(options.signIn && { storageState: options.signIn.storageState }),
    });
    let redirect: string | undefined;
    await routeThroughGuard(context, {
      policy: options.policy,
      signal,
      ...(options.signIn && { signInOrigin: options.signIn.origin }),
      blocked,
      onDocumentRefused: (refusal) => (documentRefusal = refusal),
      onRedirect: (location) => (redirect = location),
      fail,
    });
    const page = await context.newPage();
    // Popups and window.open would be more renderers, and more pages loading, for nothing the tool reads.
    context.on('page', (other) => {
      if (other !== page) other.close().catch(() => {});
    });
    let response;
    let next = target.href;
    for (let hops = 0; ; hops++) {
      redirect = undefined;
      documentRefusal = undefined;
      try {
        response = await page.goto(next, { waitUntil: 'domcontentloaded', timeout: left() });
      } catch (err) {
        throw navigationError(err, new URL(next), documentRefusal, signal);
      }
      if (redirect === undefined) break;
      if (hops === MAX_REDIRECTS) throw new ToolUpstreamError(`more than ${MAX_REDIRECTS} redirects, the last from ${describeUrl(new URL(next))}`, { retryable: false });
      next = redirect;
      if (!/^https?:/i.test(next)) throw new OutboundRefusedError(`refused: ${describeUrl(target)} redirected to a ${new URL(next).protocol} URL; only http and https are followed`, new URL(next).hostname);
    }
    // Scripts may still fetch and render; wait for the network to go quiet, within the time left.
    await page.waitForLoadState('networkidle', { timeout: Math.min(SETTLE_MS, left()) }).catch(() => {});
    signal.throwIfAborted();
    // One character more than the cap tells a page that was cut from one that fit. The page's scripts
    // run in the same realm and could change what comes back, so its types are checked here.
    const read = await page.evaluate(pageToMarkdown, options.maxChars + 1);
    const title = typeof read?.title === 'string' ? read.title.slice(0, 1000) : '';
    const markdown = typeof read?.markdown === 'string' ? read.markdown.slice(0, options.maxChars + 1) : '';
    const truncated = markdown.length > options.maxChars;
    return {
      url: describeUrl(new URL(page.url())),
      status: response?.status() ?? null,
      title,
      markdown: truncated ? `${markdown.slice(0, options.maxChars)}…` : markdown,
      truncated,
      blocked: [...blocked],
    };
  } catch (err) {
    if (limitError) throw limitError;
    // Playwright's own timeouts (launch, goto) end at the same moment as the deadline, sometimes first.
    const timedOut = deadline.aborted || (err instanceof Error && err.name === 'TimeoutError');
    if (timedOut && !options.signal?.aborted) {
      throw new OutboundTimeoutError(`opening ${describeUrl(target)} took longer than the ${options.timeoutMs} ms limit`, options.timeoutMs);
    }
    throw err;
  } finally {
    signal.removeEventListener('abort', closeBrowser);
    await closeBrowser();
    giveBackSlot?.();
  }
}

/** Why the page did not load: the guard's reason when it refused the document (or a redirect), else Chromium's. */
function navigationError(err: unknown, target: URL, refusal: BlockedRequest | undefined, signal: AbortSignal): Error {
  if (signal.aborted || (err instanceof Error && err.name === 'TimeoutError')) return err instanceof Error ? err : new Error(String(err));
  const message = err instanceof Error ? err.message : String(err);
  if (/Download is starting/i.test(message)) {
    return new ToolUpstreamError(`${describeUrl(target)} is a download, and the browser tool does not download files`, { retryable: false });
  }
  if (refusal) return new ToolError(`${describeUrl(target)} could not be opened: ${refusal.reason}`, false);
  return new ToolUpstreamError(`${describeUrl(target)} could not be opened: ${message.split('\n')[0]}`, { retryable: true });
}
