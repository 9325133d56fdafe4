import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';

/**
 * The innermost error of a Temporal failure chain (ActivityFailure → ApplicationFailure, ChildWorkflowFailure
 * → …): where the type and the message a person should read are. Safe in workflow code.
 */
export function innermostCause(err: unknown): unknown {
  let cause = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  return cause;
}

/** The failure type of the innermost cause, when it is an ApplicationFailure. */
export function failureTypeOf(err: unknown): string | undefined {
  const cause = innermostCause(err);
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The innermost cause's message, for a record a person reads. */
export function failureMessageOf(err: unknown): string {
  const cause = innermostCause(err);
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * The message a person should read, saying so when an activity gave up after its retries (or its time):
 * "checkInput gave up after its retries: connection refused" rather than a bare "connection refused".
 */
export function failureMessageWithRetries(err: unknown): string {
  const message = failureMessageOf(err);
  if (!(err instanceof ActivityFailure)) return message;
  if (err.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED) return `${err.activityType} gave up after its retries: ${message}`;
  if (err.retryState === RetryState.TIMEOUT) return `${err.activityType} gave up when its time ran out: ${message}`;
  return message;
}
