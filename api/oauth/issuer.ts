/**
 * The authorization server's issuer identifier (RFC 8414 §2): PUBLIC_URL without a trailing slash.
 * It is also the base of every endpoint address the metadata announces.
 */
export function issuerFor(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}
