import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { ProviderKind } from '../../db/schema.js';
import { OutboundRefusedError } from '../tools/errors.js';
import { guardedWebFetch } from '../tools/guarded-web-fetch.js';
import { outboundPolicyFromEnv } from '../tools/outbound-policy.js';
import type { OutboundPolicy } from '../tools/types.js';
import { ModelConfigurationError } from './errors.js';
import { integerSetting } from '../../db/integer-settings.js';

/** A workspace's provider connection with its secrets opened, as a model call uses it. Never logged, never stored. */
export interface ProviderConnection {
  name: string;
  kind: ProviderKind;
  baseURL: string;
  apiKey: string | undefined;
  headers: Record<string, string>;
}

/** The `fetch` a provider's SDK calls with. */
export type ProviderFetch = typeof globalThis.fetch;

/** The base URL a connection of each kind gets when none is given (the SDKs' own would read the server's env). */
export const DEFAULT_BASE_URLS: Partial<Record<ProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
};

// A long completion streams far more than the guard's 1 MiB default for tool answers.
const MAX_MODEL_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * How long a workspace's provider may stay silent: before its response headers, and between two chunks
 * of its body. A base URL that accepts the connection and sends nothing would otherwise hold a worker's
 * activity slot for the whole activity timeout (its heartbeats keep it alive), every attempt.
 * PROVIDER_IDLE_TIMEOUT_MS overrides it (tests use a short one).
 */
export const PROVIDER_IDLE_TIMEOUT_MS = 60_000;

/** The provider went silent for longer than its idle timeout (retryable: the next attempt may find it awake). */
export class ProviderTimeoutError extends Error {
  override readonly name = 'ProviderTimeoutError';
}

export function providerIdleTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('PROVIDER_IDLE_TIMEOUT_MS', env) ?? PROVIDER_IDLE_TIMEOUT_MS;
}

/**
 * A `fetch` for a workspace's provider: through the outbound guard (a workspace must not reach the
 * server's private network through a base URL unless the operator allow-lists it, TOOL_HTTP_ALLOW_HOSTS),
 * and a refusal is final, not a failure worth retrying. A provider silent for `idleMs` (before the
 * headers or between body chunks) has its request torn down with a ProviderTimeoutError.
 */
export function providerFetch(policy: OutboundPolicy = outboundPolicyFromEnv(), idleMs: number = providerIdleTimeoutFromEnv()): ProviderFetch {
  const guarded = guardedWebFetch({ policy, maxResponseBytes: MAX_MODEL_RESPONSE_BYTES });
  return async (input, init) => {
    const silence = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, silence.signal]) : silence.signal;
    const timer = setTimeout(() => silence.abort(new ProviderTimeoutError(`the provider sent no response headers within ${idleMs} ms`)), idleMs);
    let response: Response;
    try {
      // The SDKs pass a URL string; a Request would do too, since the guarded fetch rebuilds it with `new Request`.
      response = await guarded(input as string | URL, { ...init, signal });
    } catch (err) {
      if (silence.signal.aborted) throw silence.signal.reason;
      if (err instanceof OutboundRefusedError) throw new ModelConfigurationError(`the provider's base URL is ${err.message}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    if (!response.body) return response;
    return new Response(withIdleTimeout(response.body, idleMs, silence), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `body`, erroring with a ProviderTimeoutError (and tearing the request down) when no chunk comes for `idleMs`. */
function withIdleTimeout(body: ReadableStream<Uint8Array>, idleMs: number, silence: AbortController): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const silent = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const reason = new ProviderTimeoutError(`the provider sent nothing for ${idleMs} ms in the middle of its answer`);
          silence.abort(reason);
          reject(reason);
        }, idleMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), silent]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(silence.signal.aborted ? silence.signal.reason : err);
        reader.cancel().catch(() => undefined);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The AI SDK model `model` of the connection; nothing falls back to the server's environment. */
export function connectionModel(connection: ProviderConnection, model: string, fetch: ProviderFetch = providerFetch()): LanguageModel {
  const { baseURL, apiKey, headers } = connection;
  switch (connection.kind) {
    case 'openai':
      // Chat Completions, as for the server's own OpenAI provider.
      return createOpenAI({ apiKey: apiKey ?? '', baseURL, headers, fetch }).chat(model);
    case 'anthropic':
      return createAnthropic({ apiKey: apiKey ?? '', baseURL, headers, fetch })(model);
    case 'openai_compatible':
      // Usage arrives in a stream only when asked for.
      return createOpenAICompatible({ name: connection.name, baseURL, apiKey, headers, includeUsage: true, fetch }).chatModel(model);
  }
}
