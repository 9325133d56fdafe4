import { providerFetch, type ProviderConnection, type ProviderFetch } from './provider-connection.js';
import { redactSecrets } from './provider-failure.js';

/** What one test call of a provider connection found. */
export interface ConnectionCheck {
  ok: boolean;
  /** The provider's HTTP status; null when no answer came (refused, unreachable, timed out). */
  status: number | null;
  latency_ms: number;
  /** Some of the models the provider lists (at most MAX_LISTED), when it answered. */
  models: string[];
  /** The provider's own error message, or why no answer came; never the key or a header value. */
  error: string | null;
}

// Well under a client's patience (and the fuzzer's 10 s): a provider that answers at all answers its models list fast.
const TIMEOUT_MS = 5_000;
const MAX_LISTED = 20;
const MAX_ERROR_CHARS = 500;
// A models list is a few KiB; a test call made on demand reads no more than this of whatever answers.
export const MAX_CHECK_RESPONSE_BYTES = 1024 * 1024;
const ANTHROPIC_VERSION = '2023-06-01';

/**
 * One real, free call with the connection's address, key and headers: its models list (`GET
 * {base_url}/models`, which OpenAI, Anthropic and OpenAI-compatible servers all answer). It spends no
 * tokens and needs no model name, yet fails as a model call would on a wrong key, address or header.
 */
export async function checkProviderConnection(connection: ProviderConnection, fetch: ProviderFetch = providerFetch()): Promise<ConnectionCheck> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (status: number | null, message: string): ConnectionCheck => ({
    ok: false,
    status,
    latency_ms: elapsed(),
    models: [],
    error: redactSecrets(message, connection).slice(0, MAX_ERROR_CHARS),
  });
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${connection.baseURL.replace(/\/+$/, '')}/models`, { headers: requestHeaders(connection), signal: AbortSignal.timeout(TIMEOUT_MS) });
    text = await readCapped(response);
  } catch (err) {
    const reason = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS} ms` : errorText(err);
    return failed(null, reason);
  }
  const body = parseJson(text);
  if (!response.ok) return failed(response.status, providerMessage(body) ?? (text.trim() || `HTTP ${response.status}`));
  return { ok: true, status: response.status, latency_ms: elapsed(), models: modelIds(body), error: null };
}

/** The body's first MAX_CHECK_RESPONSE_BYTES as text; the rest is never read (a cut JSON body lists no models). */
async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_CHECK_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.subarray(0, MAX_CHECK_RESPONSE_BYTES - size));
    size += value.byteLength;
  }
  if (size >= MAX_CHECK_RESPONSE_BYTES) await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).toString('utf8');
}

function requestHeaders(connection: ProviderConnection): Record<string, string> {
  const auth: Record<string, string> =
    connection.kind === 'anthropic'
      ? { 'x-api-key': connection.apiKey ?? '', 'anthropic-version': ANTHROPIC_VERSION }
      : connection.apiKey
        ? { authorization: `Bearer ${connection.apiKey}` }
        : {};
  return { ...auth, ...connection.headers };
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `{"error": {"message"}}` (OpenAI, Anthropic and most compatible servers), `{"error": "..."}` or `{"message"}`. */
function providerMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return typeof message === 'string' ? message : undefined;
}

function modelIds(body: unknown): string[] {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) return [];
  return data.flatMap((entry) => (typeof entry?.id === 'string' ? [entry.id as string] : [])).slice(0, MAX_LISTED);
}
