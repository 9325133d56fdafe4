import { OAuthError } from './oauth-error.js';

/** The one scope: everything a standard API key may do in the chosen workspace. */
export const SCOPE = 'api';

/**
 * Checks a requested `scope` parameter (space-separated, RFC 6749 §3.3) and answers the scope granted.
 * An absent or empty scope means the default, `api`.
 */
export function grantedScope(requested: string | undefined): string {
  const scopes = (requested ?? '').split(' ').filter(Boolean);
  const unknown = scopes.filter((scope) => scope !== SCOPE);
  if (unknown.length) throw new OAuthError('invalid_scope', `unknown scope ${unknown.map((s) => `'${s}'`).join(', ')}; the only scope is '${SCOPE}'`);
  return SCOPE;
}
