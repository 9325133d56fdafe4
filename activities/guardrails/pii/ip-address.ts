import net from 'node:net';
import type { Candidate } from './candidate.js';

// Neither may start or end inside a longer dotted or colon-separated token: `1.2.3.4.5` is no address.
const IPV4_SHAPE = /(?<![\p{L}\p{N}_.])(?:\d{1,3}\.){3}\d{1,3}(?![\p{L}\p{N}_]|\.\d)/gu;
const IPV6_SHAPE = /(?<![\p{L}\p{N}_:.])[0-9A-Fa-f:.]{2,45}(?![\p{L}\p{N}_:])/gu;

/**
 * IPv4 addresses with every octet 0–255 (a version string such as `1.2.3` has too few parts), and
 * IPv6 addresses in any form Node accepts, including `::1` and `::ffff:192.0.2.1`.
 */
export function findIpv4Addresses(text: string): Candidate[] {
  return [...text.matchAll(IPV4_SHAPE)]
    .filter((match) => match[0].split('.').every((octet) => Number(octet) <= 255))
    .map((match) => ({ start: match.index, end: match.index + match[0].length, valid: true }));
}

export function findIpv6Addresses(text: string): Candidate[] {
  const addresses: Candidate[] = [];
  for (const match of text.matchAll(IPV6_SHAPE)) {
    const address = match[0].replace(/\.+$/, ''); // the full stop ending a sentence
    const colons = address.split(':').length - 1;
    // `::` alone is a programming-language token far more often than the unspecified address.
    if (colons >= 2 && address !== '::' && net.isIPv6(address)) {
      addresses.push({ start: match.index, end: match.index + address.length, valid: true });
    }
  }
  return addresses;
}
