import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { ToolConfigError } from '../tools/errors.js';

/**
 * CHROMIUM_PATH, else Debian's binary itself: `/usr/bin/chromium` is a shell wrapper that reads flags
 * from /etc/chromium.d, which the tool's launch flags should not depend on.
 */
export function chromiumPathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  return fs.existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : '/usr/bin/chromium';
}

let warnedNoSandbox = false;

/**
 * Whether to turn Chromium's sandbox off: only when the operator says so (CHROMIUM_NO_SANDBOX=true),
 * never silently. As root the sandbox cannot start, so root without the setting is a clear error.
 */
export function chromiumNoSandbox(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.CHROMIUM_NO_SANDBOX === 'true') {
    if (!warnedNoSandbox) {
      warnedNoSandbox = true;
      console.warn('[browser] CHROMIUM_NO_SANDBOX=true: the browser tool runs Chromium without its sandbox; the container is the only boundary');
    }
    return true;
  }
  if (process.getuid?.() === 0) {
    throw new ToolConfigError(
      'the browser tool cannot start Chromium: this worker runs as root, where Chromium\'s sandbox does not work. Run the worker as ' +
        'another user, or set CHROMIUM_NO_SANDBOX=true to run Chromium without its sandbox (the container is then the boundary)',
    );
  }
  return false;
}

export interface ToolChromium {
  browser: Browser;
  /** Closes the browser; if that hangs for CLOSE_GRACE_MS, kills Chromium's process group. */
  close(): Promise<void>;
}

/**
 * Headless, and quiet: without the background-networking switches Chromium calls Google's services at
 * every start, which a closed network refuses many at a time. The tests' own Chromium starts with these too.
 */
export const QUIET_HEADLESS_FLAGS = [
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const CLOSE_GRACE_MS = 5000;
// Chromium ignores switches it does not know; this one finds the call's process in /proc to kill it.
const MARKER_SWITCH = '--agent-platform-browser-call';

/**
 * Headless Chromium for the browser tool, one per call (no cache, cookie or process shared between
 * workspaces' calls). Every request a page makes is served by the tool's route through the outbound
 * guard; the proxy below goes nowhere and every name resolves to nothing, so a request the route does
 * not see (a WebSocket, a prefetch, anything Chromium starts on its own) fails instead of reaching the
 * network. `<-loopback>` removes Chromium's implicit bypass for localhost, and WebRTC may not send UDP
 * around the proxy. Renderers and their JavaScript heaps are capped: a page may not take the worker's memory.
 */
export async function launchToolChromium(timeoutMs: number): Promise<ToolChromium> {
  const marker = randomUUID();
  const browser = await chromium.launch({
    executablePath: chromiumPathFromEnv(),
    timeout: timeoutMs,
    chromiumSandbox: !chromiumNoSandbox(),
    args: [
      ...QUIET_HEADLESS_FLAGS,
      '--disable-domain-reliability',
      '--dns-prefetch-disable',
      '--proxy-server=http://127.0.0.1:9',
      '--proxy-bypass-list=<-loopback>',
      '--host-resolver-rules=MAP * ~NOTFOUND',
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--renderer-process-limit=2',
      '--js-flags=--max-old-space-size=512',
      `${MARKER_SWITCH}=${marker}`,
    ],
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        browser.close().then(() => true, () => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (!closed) killChromium(marker);
    })());
  return { browser, close };
}

/** Playwright starts Chromium as the leader of a process group of its own: SIGKILL to the group takes its renderers too. */
function killChromium(marker: string): void {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return; // not Linux
  }
  for (const pid of pids) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(`${MARKER_SWITCH}=${marker}`)) continue;
      const group = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[2]);
      process.kill(group === Number(pid) ? -group : Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
