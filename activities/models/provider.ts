import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { ModelConfigurationError } from './errors.js';
import { parseModelId, requireModelName } from './model-id.js';
import { connectionModel } from './provider-connection.js';
import { providerFailure } from './provider-failure.js';
import { streamScriptedTurn } from './scripted.js';
import { streamSdkTurn } from './sdk-turn.js';
import { modelSettingsFromEnv, type ModelSettings } from './settings.js';
import type { ModelTurnCallbacks, ModelTurnRequest, ModelTurnResult } from './types.js';

export const MODEL_PROVIDERS = ['openai', 'anthropic', 'ollama', 'scripted'] as const;

/**
 * Runs one model turn for `request.model` (`provider/model`, the provider being the workspace's
 * connection of that name when `settings` has one, else the server's): streams its text through
 * `callbacks.onTextDelta` and returns the text, the tool calls to run, usage and finish reason.
 * Rejects with ModelConfigurationError when retrying cannot help, and with `callbacks.signal.reason`
 * when the signal fires.
 */
export async function streamModelTurn(
  request: ModelTurnRequest,
  callbacks: ModelTurnCallbacks,
  settings: ModelSettings = modelSettingsFromEnv(),
): Promise<ModelTurnResult> {
  const id = parseModelId(request.model);
  if (id.provider === 'scripted') return streamScriptedTurn(request, callbacks);
  const model = requireModelName(id, request.model);
  const connection = await settings.workspaceConnection?.(id.provider);
  if (!connection) return streamSdkTurn(sdkModel(id.provider, model, settings), request, callbacks);
  try {
    return await streamSdkTurn(connectionModel(connection, model), request, callbacks);
  } catch (err) {
    if (callbacks.signal.aborted) throw err; // the activity's own cancellation, no provider's words
    // A provider's error may quote the key or a header it was sent, anywhere in the error object.
    throw providerFailure(err, connection);
  }
}

function sdkModel(provider: string, model: string, settings: ModelSettings): LanguageModel {
  switch (provider) {
    case 'openai': {
      const apiKey = requireApiKey(settings.openai.apiKey, 'OPENAI_API_KEY', provider);
      // Chat Completions rather than the Responses API: every OpenAI-compatible server speaks it.
      return createOpenAI({ apiKey, baseURL: settings.openai.baseURL }).chat(model);
    }
    case 'anthropic': {
      const apiKey = requireApiKey(settings.anthropic.apiKey, 'ANTHROPIC_API_KEY', provider);
      return createAnthropic({ apiKey, baseURL: settings.anthropic.baseURL })(model);
    }
    case 'ollama':
      // Ollama reports usage in a stream only when asked to.
      return createOpenAICompatible({ name: 'ollama', baseURL: settings.ollama.baseURL, includeUsage: true }).chatModel(model);
    default: {
      const known = MODEL_PROVIDERS.map((name) => `'${name}/'`).join(', ');
      throw new ModelConfigurationError(`unknown model provider '${provider}': model ids start with one of ${known}, or the name of a provider connection of the workspace`);
    }
  }
}

function requireApiKey(key: string | undefined, variable: string, provider: string): string {
  if (!key) throw new ModelConfigurationError(`${variable} is not set, so '${provider}/...' models cannot be called`);
  return key;
}
