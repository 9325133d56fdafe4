import { hash, randomBytes } from 'node:crypto';

/** Secrets handed out once (API keys, OAuth codes, tokens, sessions, client secrets) and what is stored in their place. */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 43; // 43 base62 characters carry 256 bits

/** `prefix` + 43 uniform base62 characters (rejection sampling), the shape of API keys. */
export function randomSecret(prefix = ''): string {
  let out = '';
  while (out.length < SECRET_CHARS) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < SECRET_CHARS) out += BASE62[byte % 62];
    }
  }
  return prefix + out;
}

/** What is stored in place of a secret: its SHA-256, in hex. */
export function sha256Hex(value: string): string {
  // The one-shot form: every authenticated request hashes its key, and a Hash object costs ~2.5x more.
  return hash('sha256', value, 'hex');
}
