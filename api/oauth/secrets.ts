import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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

/** What is stored in place of a code, token, session or client secret. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function hmacBase64Url(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}

/** Compares two strings in time that does not depend on where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
