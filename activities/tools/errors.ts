/**
 * The ways a tool call can fail. Every one is a `ToolError`, so the activity can tell a failure worth
 * reporting to the model from a bug, and `retryable` says whether the same call could succeed later.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The arguments do not fit the tool: a missing URL placeholder, or a schema violation. */
export class ToolArgumentsError extends ToolError {
  constructor(
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message, false);
  }
}

/** The tool's own configuration cannot work, e.g. a URL template that gives no valid URL. */
export class ToolConfigError extends ToolError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, false, options);
  }
}

/** The remote side failed: a non-2xx answer, a broken connection, or a tool that reported an error. */
export class ToolUpstreamError extends ToolError {
  readonly status: number | undefined;

  constructor(message: string, details: { status?: number; retryable: boolean; cause?: unknown }) {
    super(message, details.retryable, { cause: details.cause });
    this.status = details.status;
  }
}

/** The outbound guard refused a destination: a private, loopback, metadata… address, or a bad scheme. */
export class OutboundRefusedError extends ToolError {
  constructor(
    message: string,
    readonly host: string,
    readonly address?: string,
  ) {
    super(message, false);
  }
}

export class OutboundTimeoutError extends ToolError {
  constructor(
    message: string,
    readonly timeoutMs: number,
  ) {
    super(message, true);
  }
}

export class ResponseTooLargeError extends ToolError {
  constructor(
    message: string,
    readonly maxBytes: number,
  ) {
    super(message, false);
  }
}
