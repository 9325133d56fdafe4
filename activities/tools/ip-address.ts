import net from 'node:net';

/** An IP address as one number, so that "is it in this range" is a comparison of its high bits. */
export interface IpAddress {
  version: 4 | 6;
  value: bigint;
}

/** A CIDR range such as `10.0.0.0/8` or `fc00::/7`. */
export interface IpRange extends IpAddress {
  prefix: number;
}

const BITS = { 4: 32, 6: 128 } as const;

/** Parses a dotted IPv4 or an IPv6 address (brackets and a `%zone` suffix allowed); undefined for anything else. */
export function parseIp(text: string): IpAddress | undefined {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (net.isIPv4(bare)) return { version: 4, value: ipv4Value(bare) };
  if (net.isIPv6(bare)) return { version: 6, value: ipv6Value(bare) };
  return undefined;
}

/** Parses `address/prefix`; host bits below the prefix are ignored, as routers do. */
export function parseCidr(text: string): IpRange | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!match) return undefined;
  const ip = parseIp(match[1]!);
  const prefix = Number(match[2]);
  if (!ip || prefix > BITS[ip.version]) return undefined;
  return { ...ip, prefix };
}

export function inRange(ip: IpAddress, range: IpRange): boolean {
  if (ip.version !== range.version) return false;
  const hostBits = BigInt(BITS[ip.version] - range.prefix);
  return ip.value >> hostBits === range.value >> hostBits;
}

export function sameAddress(a: IpAddress, b: IpAddress): boolean {
  return a.version === b.version && a.value === b.value;
}

/** `::ffff:a.b.c.d` is the IPv4 host a.b.c.d reached over an IPv6 socket; anything else is returned as is. */
export function unmapIpv4(ip: IpAddress): IpAddress {
  if (ip.version === 6 && ip.value >> 32n === 0xffffn) return { version: 4, value: ip.value & 0xffffffffn };
  return ip;
}

export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

function ipv4Value(dotted: string): bigint {
  return dotted.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(octet), 0n);
}

function ipv6Value(text: string): bigint {
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) stands for the last two 16-bit groups.
  const hex = text.replace(/(\d+\.\d+\.\d+\.\d+)$/, (dotted) => {
    const v = ipv4Value(dotted);
    return `${(v >> 16n).toString(16)}:${(v & 0xffffn).toString(16)}`;
  });
  const [left = '', right] = hex.split('::');
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const groups = right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}
