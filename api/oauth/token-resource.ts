import { OAuthError } from './oauth-error.js';
import { parseResource, resourceCovers, type Resource } from './resource.js';

/**
 * The resource a new token is for (RFC 8707 §2.2): the token request may name one within what the user
 * consented to, narrowing the token to it; otherwise the token is for the grant's resource.
 */
export function narrowResource(grantResource: string | null, requested: string | undefined, publicUrl: string): Resource | null {
  if (requested === undefined) return grantResource === null ? null : parseResource(grantResource, publicUrl);
  const resource = parseResource(requested, publicUrl);
  if (!resourceCovers(grantResource, resource.uri)) {
    throw new OAuthError('invalid_target', `the authorization covers ${grantResource}, not ${resource.uri}`);
  }
  return resource;
}
