import { OAuthError } from './oauth-error.js';

export const MAX_REDIRECT_URIS = 10;
const MAX_REDIRECT_URI_LENGTH = 2000;

/** Schemes a browser would run or read locally rather than hand to a client. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:', 'view-source:', 'ws:', 'wss:', 'ftp:']);

/**
 * Checks one redirect URI at registration (RFC 6749 §3.1.2, RFC 8252, RFC 9700 §4.1): absolute, no
 * fragment, no credentials; `https`, or `http` only on a loopback host (a native app's local listener),
 * or a private-use scheme of a native app (`com.example.app:/callback`, `cursor://...`).
 */
export function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid('each redirect URI must be a non-empty string');
  if (value.length > MAX_REDIRECT_URI_LENGTH) throw invalid(`a redirect URI may have at most ${MAX_REDIRECT_URI_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`'${value}' is not an absolute URI`);
  }
  if (value.includes('#')) throw invalid(`'${value}' has a fragment`);
  if (url.username || url.password) throw invalid(`'${value}' has credentials in it`);
  // A URI is ASCII (RFC 3986); an IRI's host goes in its xn-- form and the rest percent-encoded. The
  // URI is matched and sent back as registered, and a Location header cannot carry other characters.
  if (!isVisibleAscii(value) || /[<>"]/.test(value)) throw invalid(`'${value}' has characters a URI may not have (an internationalized host is written in its xn-- form, other characters percent-encoded)`);
  if (url.protocol === 'https:') {
    if (!url.hostname) throw invalid(`'${value}' has no host`);
    return value;
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) throw invalid(`'${value}' uses http on a host that is not loopback; use https`);
    return value;
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) throw invalid(`'${value}' uses the scheme ${url.protocol}, which cannot be a redirect URI`);
  return value;
}

/** localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function invalid(description: string): OAuthError {
  return new OAuthError('invalid_redirect_uri', description);
}

/** Whether the text is printable ASCII without spaces: what a URI (RFC 3986) and a Location header may hold. */
export function isVisibleAscii(text: string): boolean {
  return !/[^\x21-\x7e]/.test(text);
}
