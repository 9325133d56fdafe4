import { readPage, type PageReading } from '../browser/read-page.js';
import { openSignIn } from '../browser/sign-ins.js';
import type { BrowserToolConfig } from '../../db/schema.js';
import type { Db } from '../../db/database.js';
import { validateArguments } from './arguments-validator.js';
import { browserToolArgumentsSchema, DEFAULT_BROWSER_MAX_CHARS, DEFAULT_BROWSER_TIMEOUT_MS } from './config-schemas.js';
import { ToolArgumentsError } from './errors.js';
import type { ToolCallOptions } from './types.js';

export interface BrowserToolResult extends PageReading {
  /** Whether the tool's saved sign-in was loaded and the page read is on its origin (its cookies go nowhere else). */
  signed_in: boolean;
}

/**
 * Calls a browser tool: opens `arguments.url` in headless Chromium and answers the page as Markdown
 * (activities/browser/read-page.ts). The tool's saved sign-in is opened here, at call time, and loaded
 * only when the URL is on the sign-in's origin: its cookies are for that site alone.
 */
export async function callBrowserTool(
  db: Db,
  tenantId: string,
  config: BrowserToolConfig,
  args: Record<string, unknown>,
  options: ToolCallOptions,
): Promise<BrowserToolResult> {
  const { url } = validateArguments(browserToolArgumentsSchema, args) as { url: string };
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new ToolArgumentsError('invalid arguments: arguments.url must be an http or https URL', ['arguments.url must be an http or https URL']);
  }
  const signIn = config.sign_in ? await openSignIn(db, tenantId, config.sign_in) : undefined;
  const startsOnSignIn = signIn !== undefined && new URL(url).origin === signIn.origin;
  const reading = await readPage(url, {
    policy: options.policy,
    signal: options.signal,
    timeoutMs: config.timeout_ms ?? DEFAULT_BROWSER_TIMEOUT_MS,
    maxChars: config.max_chars ?? DEFAULT_BROWSER_MAX_CHARS,
    ...(startsOnSignIn && { signIn: { origin: signIn.origin, storageState: signIn.storageState } }),
  });
  // The page may have been redirected off the sign-in's site, where its cookies were not sent.
  return { ...reading, signed_in: startsOnSignIn && new URL(reading.url).origin === signIn.origin };
}
