import { OAuthError } from './oauth-error.js';

/**
 * Resource indicators (RFC 8707). A client may name the resource it wants a token for; the service
 * accepts only itself: PUBLIC_URL or an address below it, such as `${PUBLIC_URL}/mcp`. Tokens carry
 * the resource's path below PUBLIC_URL and are accepted only on requests at or below that path; a token
 * without a resource, or for PUBLIC_URL itself, is accepted everywhere.
 */

export interface Resource {
  /** Normalized: origin and path, no trailing slash. */
  uri: string;
  /** The path below PUBLIC_URL: '' for the whole service, '/mcp' for the MCP server. */
  path: string;
}

/** Parses a `resource` parameter; throws invalid_target for anything that is not this service. */
export function parseResource(value: string, publicUrl: string): Resource {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_target', 'resource must be an absolute URI');
  }
  if (value.includes('#') || url.search) throw new OAuthError('invalid_target', 'resource must not have a query or fragment');
  const base = new URL(publicUrl);
  const basePath = trimSlashes(base.pathname);
  const path = trimSlashes(url.pathname);
  const below = path === basePath || path.startsWith(`${basePath}/`);
  if (url.origin !== base.origin || !below || url.username || url.password) {
    throw new OAuthError('invalid_target', `resource must be ${publicUrl} or an address below it`);
  }
  return { uri: url.origin + path, path: path.slice(basePath.length) };
}

/** True when a token for the resource at `resourcePath` (null: no resource) may be used on `requestPath`. */
export function resourcePathCovers(resourcePath: string | null, requestPath: string): boolean {
  if (!resourcePath) return true;
  const path = trimSlashes(requestPath);
  return path === resourcePath || path.startsWith(`${resourcePath}/`);
}

/**
 * The same rule with full addresses, for a server that knows its own: a token issued for `tokenResource`
 * (null: no resource) is accepted at `serverUrl` when it names no resource, this server, or a prefix of it.
 */
export function resourceCovers(tokenResource: string | null, serverUrl: string): boolean {
  if (!tokenResource) return true;
  const server = trimSlashes(serverUrl);
  const resource = trimSlashes(tokenResource);
  return server === resource || server.startsWith(`${resource}/`);
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}
