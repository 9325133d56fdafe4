import dns from 'node:dns/promises';
import net from 'node:net';
import { OutboundRefusedError } from '../tools/errors.js';
import { assertAddressAllowed, assertHostNameAllowed } from '../tools/outbound-policy.js';
import type { OutboundPolicy } from '../tools/types.js';

const LOOKUP_TIMEOUT_MS = 3_000;

/**
 * Why a subscription's URL is refused when it is saved, or undefined: the outbound guard's policy (the
 * one HTTP tools follow) judged on what the host resolves to now. Every attempt is judged again
 * (activities/webhooks/attempt.ts), since DNS can change after the save.
 */
export async function webhookUrlProblem(raw: string, policy: OutboundPolicy): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be http or https';
  if (url.username || url.password) return 'must not carry credentials (sign requests with the secret instead)';
  if (url.hash) return 'must not have a fragment';
  // Port 0 parses but reaches nothing: every attempt would fail for the whole retry window.
  if (url.port === '0') return 'must not use port 0';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  try {
    assertHostNameAllowed(policy, hostname);
    if (net.isIP(hostname)) {
      assertAddressAllowed(policy, hostname, hostname);
      return undefined;
    }
    const addresses = await lookup(hostname);
    if (!addresses) return `host ${hostname} does not resolve`;
    for (const { address } of addresses) assertAddressAllowed(policy, hostname, address);
    return undefined;
  } catch (err) {
    if (err instanceof OutboundRefusedError) return err.message;
    throw err;
  }
}

async function lookup(hostname: string): Promise<Array<{ address: string }> | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOOKUP_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([dns.lookup(hostname, { all: true }).catch(() => undefined), timeout]);
    return found && found.length > 0 ? found : undefined;
  } finally {
    clearTimeout(timer);
  }
}
