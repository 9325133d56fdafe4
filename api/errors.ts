/** The error codes of the API's error body, each with the HTTP status it travels with. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One failing field of a 400: a JSON pointer-ish path (`body.name`, `query.limit`) and why. */
export interface FieldError {
  field: string;
  message: string;
}

/** An error the API answers with `{"error": {"code", "message", ...details}}` and its status. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Response headers that explain the error, e.g. Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }

  toBody(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}

export const notFound = (what: string, ref: string) => new ApiError('not_found', `${what} '${ref}' not found`);

/** What a repository found, or the 404 naming what was asked for (`notFound(what, ref)`). */
export function orNotFound<T>(found: T | undefined, what: string, ref: string): T {
  if (found === undefined) throw notFound(what, ref);
  return found;
}
export const invalidRequest = (message: string, fields: FieldError[]) => new ApiError('invalid_request', message, { fields });
