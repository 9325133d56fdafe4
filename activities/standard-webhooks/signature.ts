import { createHmac, timingSafeEqual } from 'node:crypto';
import { signingKey } from './secret.js';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256, keyed with the secret's
 * base64 part, over `<webhook-id>.<webhook-timestamp>.<body>`, sent as `webhook-signature: v1,<base64>`
 * (several space-separated, any one of which may match: a sender rotating its secret sends two). The
 * timestamp is in Unix seconds and must be within TIMESTAMP_TOLERANCE_SECONDS of the receiver's clock,
 * either way. Outbound webhooks sign with `signMessage`; inbound channels verify with `signatureProblem`.
 */

export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;
/** The most signatures of one header that are tried. */
const MAX_SIGNATURES = 8;

/** `v1,<base64>` for this message. */
export function signMessage(secret: string, messageId: string, timestampSeconds: number, body: string | Buffer): string {
  return `v1,${hmac(secret, messageId, String(timestampSeconds), body).toString('base64')}`;
}

export type SignatureProblem = 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature';

export interface SignedHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** Why `webhook-timestamp` is refused (not Unix seconds, or beyond the tolerance), or undefined: needs no secret. */
export function timestampProblem(timestamp: string, nowSeconds = Math.floor(Date.now() / 1000)): 'bad_timestamp' | 'stale_timestamp' | undefined {
  if (!/^\d{1,12}$/.test(timestamp)) return 'bad_timestamp';
  if (Math.abs(nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return 'stale_timestamp';
  return undefined;
}

/** Why the message does not verify, or undefined when it does. */
export function signatureProblem(secret: string, headers: SignedHeaders, body: Buffer, nowSeconds = Math.floor(Date.now() / 1000)): SignatureProblem | undefined {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return 'missing_headers';
  const timing = timestampProblem(timestamp, nowSeconds);
  if (timing) return timing;
  const expected = hmac(secret, id, timestamp, body);
  const candidates = signature.split(' ').slice(0, MAX_SIGNATURES);
  for (const candidate of candidates) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  }
  return 'bad_signature';
}

function hmac(secret: string, messageId: string, timestamp: string, body: string | Buffer): Buffer {
  return createHmac('sha256', signingKey(secret)).update(`${messageId}.${timestamp}.`).update(body).digest();
}
