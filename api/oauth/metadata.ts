import { issuerFor } from './issuer.js';
import { SUPPORTED_AUTH_METHODS } from './clients.js';
import { SCOPE } from './scope.js';

/** Authorization server metadata (RFC 8414), served at /.well-known/oauth-authorization-server. */
export function authorizationServerMetadata(publicUrl: string): Record<string, unknown> {
  const issuer = issuerFor(publicUrl);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: SUPPORTED_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: SUPPORTED_AUTH_METHODS,
    scopes_supported: [SCOPE],
    // RFC 9207: redirects carry `iss`, so a client talking to several servers can tell who answered.
    authorization_response_iss_parameter_supported: true,
  };
}
