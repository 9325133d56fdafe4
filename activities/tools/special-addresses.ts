import { formatIpv4, inRange, parseCidr, parseIp, unmapIpv4, type IpAddress } from './ip-address.js';

/** Why an address is not a public destination. */
export type AddressKind =
  | 'cloud metadata'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'carrier-grade NAT'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

export interface AddressClass {
  kind: AddressKind;
  /** Set when an IPv6 address carries an IPv4 one (mapped, NAT64, 6to4): that one decided. */
  embeddedIpv4?: string;
}

// The first match names the address, so the specific entries come before the ranges that hold them.
const SPECIAL_RANGES: Array<[string, AddressKind]> = [
  ['169.254.169.254/32', 'cloud metadata'], // AWS, GCP, Azure, OpenStack, DigitalOcean…
  ['169.254.170.2/32', 'cloud metadata'], // AWS ECS task credentials
  ['100.100.100.200/32', 'cloud metadata'], // Alibaba Cloud
  ['192.0.0.192/32', 'cloud metadata'], // Oracle Cloud (legacy)
  ['168.63.129.16/32', 'cloud metadata'], // Azure WireServer (platform agent, health probes, DNS)
  ['fd00:ec2::254/128', 'cloud metadata'], // AWS over IPv6
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'reserved'], // "this network": Linux connects 0.x.x.x to the local host
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // site-local, deprecated but still routed inside some networks
  ['ff00::/8', 'multicast'],
  ['64:ff9b:1::/48', 'reserved'],
  ['100::/64', 'reserved'],
  ['2001::/23', 'reserved'], // Teredo and other protocol assignments
  ['2001:db8::/32', 'reserved'],
  ['3fff::/20', 'reserved'],
  ['5f00::/16', 'reserved'],
];
const RANGES = SPECIAL_RANGES.map(([cidr, kind]) => ({ range: parseCidr(cidr)!, kind }));

// IPv6 prefixes that carry an IPv4 address a gateway forwards to, so the IPv4 one is judged (as is ::ffff:a.b.c.d).
const NAT64 = parseCidr('64:ff9b::/96')!;
const SIX_TO_FOUR = parseCidr('2002::/16')!;
const GLOBAL_UNICAST = parseCidr('2000::/3')!;

/** Host names that reach a cloud metadata service whatever DNS says. */
const METADATA_HOST_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** How an address is special, or undefined for an ordinary public address. Throws on text that is not an IP. */
export function classifyAddress(address: string): AddressClass | undefined {
  const parsed = parseIp(address);
  if (!parsed) throw new TypeError(`not an IP address: ${address}`);
  const embedded = embeddedIpv4(parsed);
  if (embedded) {
    const inner = classifyIp(embedded);
    return inner && { kind: inner, embeddedIpv4: formatIpv4(embedded.value) };
  }
  const kind = classifyIp(parsed);
  if (kind) return { kind };
  // Everything outside global unicast is unassigned or special-purpose.
  if (parsed.version === 6 && !inRange(parsed, GLOBAL_UNICAST)) return { kind: 'reserved' };
  return undefined;
}

export function isMetadataHostName(hostname: string): boolean {
  return METADATA_HOST_NAMES.has(hostname.toLowerCase().replace(/\.$/, ''));
}

/** "a loopback address", "an unspecified address"… for messages. */
export function describeKind(kind: AddressKind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address`;
}

function classifyIp(ip: IpAddress): AddressKind | undefined {
  return RANGES.find(({ range }) => inRange(ip, range))?.kind;
}

function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.version !== 6) return undefined;
  const unmapped = unmapIpv4(ip);
  if (unmapped !== ip) return unmapped;
  if (inRange(ip, NAT64)) return { version: 4, value: ip.value & 0xffffffffn };
  if (inRange(ip, SIX_TO_FOUR)) return { version: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return undefined;
}
