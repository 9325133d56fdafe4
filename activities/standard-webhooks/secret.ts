import { randomBytes } from 'node:crypto';

/**
 * Signing secrets in the Standard Webhooks form (https://www.standardwebhooks.com): `whsec_` and the
 * base64 of 24 to 64 random bytes. Inbound channels verify with one and outbound webhooks sign with one;
 * both seal it at rest (activities/secrets/secret-box.ts) for the one row it belongs to.
 */

export const SECRET_PREFIX = 'whsec_';
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/** The schema's pattern for a secret a caller brings; `signingSecretProblem` checks what it cannot state. */
export const SIGNING_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,86}={0,2}$';

/** A new secret: 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** Why a secret a caller brings cannot be used, or undefined. */
export function signingSecretProblem(secret: string): string | undefined {
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!secret.startsWith(SECRET_PREFIX) || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    return 'must be whsec_ followed by standard base64';
  }
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) return `must encode ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes (it encodes ${bytes})`;
  return undefined;
}

/** The HMAC key: the secret's base64 part, decoded. Anything but a `whsec_` secret is a bug upstream, not a key. */
export function signingKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error(`a signing secret starts with ${SECRET_PREFIX}`);
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}
