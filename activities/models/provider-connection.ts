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
 * A `fetch` for a workspace's provider: through the outbound guard (a workspace must not reach the
 * server's private network through a base URL unless the operator allow-lists it, TOOL_HTTP_ALLOW_HOSTS),
 * and a refusal is final, not a failure worth retrying.
 */
export function providerFetch(policy: OutboundPolicy = outboundPolicyFromEnv()): ProviderFetch {
  const guarded = guardedWebFetch({ policy, maxResponseBytes: MAX_MODEL_RESPONSE_BYTES });
  return async (input, init) => {
    try {
      // The SDKs pass a URL string; a Request would do too, since the guarded fetch rebuilds it with `new Request`.
      return await guarded(input as string | URL, init);
    } catch (err) {
      if (err instanceof OutboundRefusedError) throw new ModelConfigurationError(`the provider's base URL is ${err.message}`);
      throw err;
    }
  };
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

/** `text` with every occurrence of the connection's key replaced, for errors a provider may echo it in. */
export function withoutKey(text: string, apiKey: string | undefined): string {
  return apiKey ? text.split(apiKey).join('[api_key]') : text;
}
