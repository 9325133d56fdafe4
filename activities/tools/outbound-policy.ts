import { domainToASCII } from 'node:url';
import { OutboundRefusedError } from './errors.js';
import { inRange, parseCidr, parseIp, sameAddress, unmapIpv4, type IpAddress, type IpRange } from './ip-address.js';
import { classifyAddress, describeKind, isMetadataHostName, type AddressClass } from './special-addresses.js';
import type { OutboundPolicy } from './types.js';

export const ALLOW_HOSTS_VARIABLE = 'TOOL_HTTP_ALLOW_HOSTS';

/**
 * The policy from TOOL_HTTP_ALLOW_HOSTS: comma-separated host names (`*.corp.example` for every
 * subdomain), IP addresses and CIDR ranges. A bad entry throws here, at startup, not on the first call.
 */
export function outboundPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): OutboundPolicy {
  const allow = (env[ALLOW_HOSTS_VARIABLE] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  compileAllowList(allow);
  return { allow };
}

/** Refuses a host name that reaches a metadata service by name alone, before DNS is asked. */
export function assertHostNameAllowed(policy: OutboundPolicy, hostname: string): void {
  const name = normalizeHostName(hostname);
  if (isMetadataHostName(name) && !compileAllowList(policy.allow).names.has(name)) {
    throw new OutboundRefusedError(
      `refused: ${name} is a cloud metadata host name; allow it with ${ALLOW_HOSTS_VARIABLE} (by this exact name)`,
      name,
    );
  }
}

/**
 * Refuses `address` (what `hostname` resolved to, or the literal itself) unless it is public or the
 * operator allowed it. A metadata address is allowed only by naming that exact address: allowing
 * 169.254.0.0/16, or a host name that happens to resolve there, must not hand out cloud credentials.
 */
export function assertAddressAllowed(policy: OutboundPolicy, hostname: string, address: string): void {
  const found = classifyAddress(address);
  if (!found) return;
  const allowList = compileAllowList(policy.allow);
  const ip = unmapIpv4(parseIp(address)!);
  const named = allowList.addresses.some((allowed) => sameAddress(allowed, ip));
  if (found.kind === 'cloud metadata' ? named : named || allowList.ranges.some((range) => inRange(ip, range)) || allowsName(allowList, hostname)) {
    return;
  }
  throw new OutboundRefusedError(refusal(normalizeHostName(hostname), address, found), normalizeHostName(hostname), address);
}

interface AllowList {
  names: Set<string>;
  /** From `*.corp.example` entries, kept as `.corp.example`. */
  suffixes: string[];
  addresses: IpAddress[];
  ranges: IpRange[];
}

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

function compileAllowList(entries: string[]): AllowList {
  const list: AllowList = { names: new Set(), suffixes: [], addresses: [], ranges: [] };
  for (const entry of entries) {
    const text = entry.trim().toLowerCase();
    const range = text.includes('/') ? parseCidr(text) : undefined;
    const ip = parseIp(text);
    const wildcard = text.startsWith('*.');
    const name = normalizeHostName(domainToASCII(wildcard ? text.slice(2) : text));
    if (range) list.ranges.push(range);
    else if (ip) list.addresses.push(unmapIpv4(ip));
    else if (!text.includes('/') && HOST_NAME.test(name)) {
      if (wildcard) list.suffixes.push(`.${name}`);
      else list.names.add(name);
    } else {
      throw new Error(`${ALLOW_HOSTS_VARIABLE}: '${entry}' is not a host name, IP address or CIDR range`);
    }
  }
  return list;
}

function allowsName(allowList: AllowList, hostname: string): boolean {
  const name = normalizeHostName(hostname);
  return allowList.names.has(name) || allowList.suffixes.some((suffix) => name.endsWith(suffix));
}

function normalizeHostName(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * What the tenant is told. For an IP literal the tenant wrote the address, so its kind tells them
 * nothing new; for a host name, what it resolved to would map the internal network (DNS names,
 * private addresses) for them, so that goes to the server log only.
 */
function refusal(hostname: string, address: string, found: AddressClass): string {
  const what = describeKind(found.kind) + (found.embeddedIpv4 ? ` (it carries IPv4 ${found.embeddedIpv4})` : '');
  if (!parseIp(hostname)) {
    console.warn(`[tools] outbound request refused: ${hostname} resolves to ${address}, ${what}`);
    return `refused: the address of ${hostname} is not allowed; an operator can allow it with ${ALLOW_HOSTS_VARIABLE}`;
  }
  const how = found.kind === 'cloud metadata' ? ' (by this exact address)' : '';
  return `refused: ${address} is ${what}; allow it with ${ALLOW_HOSTS_VARIABLE}${how}`;
}
