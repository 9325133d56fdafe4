import type { Db } from '../../db/database.js';
import { findClient, type Client } from './clients.js';
import { singleValues } from './http.js';
import { issuerFor } from './issuer.js';
import { OAuthError } from './oauth-error.js';
import { parseCodeChallenge } from './pkce.js';
import { isVisibleAscii } from './redirect-uris.js';
import { parseResource, type Resource } from './resource.js';
import { grantedScope } from './scope.js';

/** The parameters of an authorization request (RFC 6749 §4.1.1) the service reads; the rest are ignored. */
export const AUTHORIZATION_PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'scope', 'resource'] as const;

export interface AuthorizationRequest {
  client: Client;
  /** Where to send the browser back: the one given, or the client's only registered URI. */
  redirectUri: string;
  /** The redirect_uri parameter as sent, which the token request must repeat; null when it was omitted. */
  redirectUriParameter: string | null;
  state: string | undefined;
  codeChallenge: string | null;
  scope: string;
  resource: Resource | null;
  /** The recognized parameters as sent, carried through the sign-in and consent forms. */
  parameters: [string, string][];
}

export type ParsedAuthorizationRequest =
  | { kind: 'valid'; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: show an error page, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'untrusted'; message: string }
  /**
   * Known client and registered redirect URI, but a bad request. Anyone may register a client with
   * any https redirect URI, so an automatic redirect would make this endpoint an open redirector
   * (RFC 9700 §4.11.2): the error is shown on the page, with a link to `location` (the error for the
   * client, RFC 6749 §4.1.2.1) that the person may follow.
   */
  | { kind: 'invalid'; client: Client; redirectUri: string; error: string; description: string; location: string };

/** Validates an authorization request from the query string or from a form that carries its parameters. */
export async function parseAuthorizationRequest(db: Db, params: URLSearchParams, publicUrl: string): Promise<ParsedAuthorizationRequest> {
  let values: Map<string, string>;
  try {
    values = singleValues(new URLSearchParams([...params].filter(([name]) => (AUTHORIZATION_PARAMETERS as readonly string[]).includes(name))));
  } catch (err) {
    return { kind: 'untrusted', message: (err as Error).message };
  }

  const clientId = values.get('client_id');
  if (!clientId) return { kind: 'untrusted', message: 'The request has no client_id.' };
  const client = await findClient(db, clientId);
  if (!client) return { kind: 'untrusted', message: 'The application that sent you here is not registered with this service.' };

  const redirectUriParameter = values.get('redirect_uri') ?? null;
  let redirectUri: string;
  if (redirectUriParameter !== null) {
    if (!client.redirectUris.includes(redirectUriParameter)) {
      return { kind: 'untrusted', message: 'The application asked to send you to an address it has not registered.' };
    }
    redirectUri = redirectUriParameter;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!;
  } else {
    return { kind: 'untrusted', message: 'The request has no redirect_uri, and the application registered more than one.' };
  }

  const state = values.get('state');
  try {
    const responseType = values.get('response_type');
    if (responseType === undefined) throw new OAuthError('invalid_request', 'response_type is required');
    if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
    const codeChallenge = parseCodeChallenge(values.get('code_challenge'), values.get('code_challenge_method'), client.isPublic);
    const scope = grantedScope(values.get('scope'));
    const resourceParameter = values.get('resource');
    const resource = resourceParameter === undefined ? null : parseResource(resourceParameter, publicUrl);
    return {
      kind: 'valid',
      request: { client, redirectUri, redirectUriParameter, state, codeChallenge, scope, resource, parameters: [...values] },
    };
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    const location = redirectLocation(redirectUri, publicUrl, { error: err.code, error_description: err.description, state });
    return { kind: 'invalid', client, redirectUri, error: err.code, description: err.description, location };
  }
}

/**
 * The redirect URI with the response parameters added to its query (RFC 6749 §4.1.2), keeping the query
 * it already has as it is, plus `iss` (RFC 9207).
 */
export function redirectLocation(redirectUri: string, publicUrl: string, parameters: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...parameters, iss: issuerFor(publicUrl) })) {
    if (value !== undefined) query.append(name, value);
  }
  // Registration takes ASCII only now; one registered before with other characters is sent in its
  // serialized form (xn-- host, percent-encoded path), as a Location header cannot carry them.
  const base = isVisibleAscii(redirectUri) ? redirectUri : new URL(redirectUri).href;
  const separator = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return base + separator + query.toString();
}
