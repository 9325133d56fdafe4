import { APICallError } from 'ai';
import { InvalidModelOutputError, ModelConfigurationError, ProviderCallError } from './errors.js';
import { ProviderTimeoutError, type ProviderConnection } from './provider-connection.js';

/** Shorter header values are left alone: replacing `1` or `json` everywhere would garble messages, and they are rarely secrets. */
const MIN_REDACTED_HEADER_CHARS = 8;
const MAX_MESSAGE_CHARS = 2000;

/**
 * `text` with the connection's key replaced by `[api_key]` and every header value of at least
 * MIN_REDACTED_HEADER_CHARS by `[header <name>]`, as sent and as a JSON string would escape them.
 */
export function redactSecrets(text: string, connection: Pick<ProviderConnection, 'apiKey' | 'headers'>): string {
  const secrets: Array<[string, string]> = [];
  if (connection.apiKey) secrets.push([connection.apiKey, '[api_key]']);
  for (const [name, value] of Object.entries(connection.headers)) {
    if (value.length >= MIN_REDACTED_HEADER_CHARS) secrets.push([value, `[header ${name}]`]);
  }
  // Longest first, so a secret that contains another is replaced whole.
  secrets.sort(([a], [b]) => b.length - a.length);
  let redacted = text;
  for (const [secret, placeholder] of secrets) {
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) redacted = redacted.split(form).join(placeholder);
  }
  return redacted;
}

/**
 * What a failed call of a workspace's provider becomes: a NEW error of ours whose only content is the
 * redacted message (no cause, response body, data or the original's stack, any of which may quote the
 * key or a header; Temporal logs and stores what an activity throws), classified as the original was:
 * our configuration errors and the provider's final answers are not retried, the rest is.
 */
export function providerFailure(err: unknown, connection: ProviderConnection): Error {
  const message = redactSecrets(describe(err), connection).slice(0, MAX_MESSAGE_CHARS);
  if (err instanceof ModelConfigurationError) return new ModelConfigurationError(message);
  if (err instanceof InvalidModelOutputError) return new InvalidModelOutputError(message);
  // The SDK wraps a body that stopped mid-way as a final APICallError; a silent provider may wake up.
  if (err instanceof Error && (err instanceof ProviderTimeoutError || err.cause instanceof ProviderTimeoutError)) return new ProviderCallError(message, true);
  if (APICallError.isInstance(err)) return new ProviderCallError(message, err.isRetryable);
  return new ProviderCallError(message, true);
}

/** The message of an Error (with its cause's, which says why a fetch failed), or the JSON of anything else (a streamed error chunk). */
function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  if (typeof err === 'string') return err;
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  if (typeof message === 'string') return `the provider reported an error: ${message}`;
  try {
    return `the provider reported an error: ${JSON.stringify(err)}`;
  } catch {
    return 'the provider reported an error';
  }
}
