import { ModelConfigurationError } from './errors.js';

/** A model id split at its first slash: `ollama/hf.co/org/model` is provider `ollama`, model `hf.co/org/model`. */
export interface ModelId {
  provider: string;
  /** Empty for the bare `scripted` id. */
  model: string;
}

export function parseModelId(id: string): ModelId {
  const slash = id.indexOf('/');
  if (slash === -1) return { provider: id, model: '' };
  return { provider: id.slice(0, slash), model: id.slice(slash + 1) };
}

/** The provider-side model name, which every provider but `scripted` needs. */
export function requireModelName(id: ModelId, original: string): string {
  if (!id.model) throw new ModelConfigurationError(`model '${original}' names no model: use '${id.provider}/<model>'`);
  return id.model;
}
