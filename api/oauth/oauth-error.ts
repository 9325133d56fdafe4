/**
 * The error codes of RFC 6749 (token endpoint §5.2, authorization redirects §4.1.2.1), RFC 7591 and
 * RFC 8707 this server answers.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'unsupported_token_type'
  | 'server_error'
  | 'temporarily_unavailable';

/** An error answered as `{"error", "error_description"}` rather than the API's error body. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}
