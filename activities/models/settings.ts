import type { ProviderConnection } from './provider-connection.js';

/**
 * Where each provider is reached and with which key, from the environment at call time (so a
 * worker picks up a rotated key on restart, and tests pass their own environment).
 */
export interface ModelSettings {
  openai: { apiKey: string | undefined; baseURL: string | undefined };
  anthropic: { apiKey: string | undefined; baseURL: string | undefined };
  /** Any OpenAI-compatible server: Ollama, vLLM, llama.cpp. */
  ollama: { baseURL: string };
  /**
   * The workspace's own connection named like a model id's provider, which wins over the above
   * (activities/models/workspace-connections.ts); absent outside a workspace's calls.
   */
  workspaceConnection?: (name: string) => Promise<ProviderConnection | undefined>;
}

export const DEFAULT_OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';

export function modelSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ModelSettings {
  return {
    // Unset base URLs leave the SDKs' own defaults (api.openai.com, api.anthropic.com).
    openai: { apiKey: env.OPENAI_API_KEY || undefined, baseURL: env.OPENAI_BASE_URL || undefined },
    anthropic: { apiKey: env.ANTHROPIC_API_KEY || undefined, baseURL: env.ANTHROPIC_BASE_URL || undefined },
    ollama: { baseURL: env.OLLAMA_BASE_URL || DEFAULT_OLLAMA_BASE_URL },
  };
}
