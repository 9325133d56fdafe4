import { createHmac, timingSafeEqual } from 'node:crypto';

// Made and stored as API keys are: one generator and one hash for every secret the service hands out.
export { randomSecret, sha256Hex } from '../../db/secrets.js';

export function hmacBase64Url(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('base64url');
}

/** Compares two strings in time that does not depend on where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
