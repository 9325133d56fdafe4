import { createHash } from 'node:crypto';
import { OAuthError } from './oauth-error.js';
import { safeEqual } from './secrets.js';

/**
 * PKCE (RFC 7636), S256 only: `plain` would hand the verifier to anyone who sees the authorization
 * request. Public clients must use it; confidential clients may.
 */

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

/** The S256 challenge of an authorization request, or null when there is none (allowed for confidential clients only). */
export function parseCodeChallenge(challenge: string | undefined, method: string | undefined, isPublicClient: boolean): string | null {
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthError('invalid_request', 'code_challenge_method without code_challenge');
    if (isPublicClient) throw new OAuthError('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256');
    return null;
  }
  // RFC 7636 §4.3: a missing method means plain.
  if (method !== 'S256') throw new OAuthError('invalid_request', `code_challenge_method must be S256${method ? `, not ${method}` : ' (plain is not supported)'}`);
  if (!S256_CHALLENGE.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the verifier');
  return challenge;
}

/** Checks the token request's verifier against the code's challenge; either both exist and match, or neither does. */
export function checkCodeVerifier(challenge: string | null, verifier: string | undefined): void {
  if (challenge === null) {
    // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade attempt.
    if (verifier !== undefined) throw new OAuthError('invalid_grant', 'this code was issued without a code_challenge');
    return;
  }
  if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required');
  if (!VERIFIER.test(verifier)) throw new OAuthError('invalid_grant', 'code_verifier must be 43-128 unreserved characters');
  if (!safeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge)) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
}
