import { isIPv6 } from 'node:net';

/**
 * The address a client is counted by in a limit (a deployment's visitors, failed sign-ins, client
 * registrations): an IPv4 address as it is, an IPv6 one by its /64 (one host usually has a whole /64 to
 * pick addresses from, so counting single addresses would give it billions of allowances).
 */
export function clientAddress(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const address = ip.replace(/%.*$/, '');
  if (!isIPv6(address)) return ip;
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = address.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}
