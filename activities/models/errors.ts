import { APICallError } from 'ai';

/**
 * A model call that retrying cannot fix: an unknown provider, a missing API key, a scripted turn
 * past the end of its script. The `callModel` activity turns it into a non-retryable failure.
 */
export class ModelConfigurationError extends Error {
  override readonly name = 'ModelConfigurationError';
}

/**
 * The model answered something we cannot use (a tool call whose arguments are not a JSON object).
 * Retryable: the next attempt samples the model again.
 */
export class InvalidModelOutputError extends Error {
  override readonly name = 'InvalidModelOutputError';
}

/**
 * A workspace connection's provider call failed: our own error in place of the SDK's, whose message,
 * body, data, stack and cause may quote the connection's key or headers (activities/models/provider-failure.ts).
 * `retryable` keeps the original's classification.
 */
export class ProviderCallError extends Error {
  override readonly name = 'ProviderCallError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * Whether another attempt of the same model turn could succeed. False for our configuration errors
 * and for provider answers the provider itself marks final (400, 401, 403, 404, ...); true for
 * everything else (rate limits, 5xx, network failures).
 */
export function isRetryableModelError(error: unknown): boolean {
  if (error instanceof ModelConfigurationError) return false;
  if (error instanceof ProviderCallError) return error.retryable;
  if (APICallError.isInstance(error)) return error.isRetryable;
  return true;
}
