import { chromium, type Browser } from 'playwright-core';
import { chromiumNoSandbox, chromiumPathFromEnv, QUIET_HEADLESS_FLAGS } from '../../activities/browser/chromium.js';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    // The browser tool's Chromium and sandbox setting (CHROMIUM_PATH, CHROMIUM_NO_SANDBOX; test/support/global.ts sets the latter for root).
    executablePath: chromiumPathFromEnv(),
    chromiumSandbox: !chromiumNoSandbox(),
    args: QUIET_HEADLESS_FLAGS,
  });
}

/**
 * Walks a person through the authorize page in a fresh browser context: signs in, picks the workspace
 * (when there is a picker), and presses Approve or Deny. Answers the address the browser ends up at,
 * the client's redirect URI with the response parameters.
 */
export async function consentInBrowser(
  browser: Browser,
  authorizationUrl: string,
  redirectUri: string,
  person: { email: string; password: string; workspaceId?: string; decision?: 'approve' | 'deny' },
): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl);
    await page.fill('input[name=email]', person.email);
    await page.fill('input[name=password]', person.password);
    await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type=submit]')]);
    if (person.workspaceId) await page.selectOption('select[name=tenant_id]', person.workspaceId);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(redirectUri)),
      page.click(`button[name=decision][value=${person.decision ?? 'approve'}]`),
    ]);
    return new URL(page.url());
  } finally {
    await context.close();
  }
}
