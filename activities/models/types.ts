import type { JsonSchema } from '../json-schema/types.js';

/** A tool call the model asked for. `id` is the provider's call id (or one we make for scripted turns). */
export interface ToolCall {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** The conversation a model turn sees, provider-neutral. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError?: boolean };

/** A tool as the model is told about it. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema;
}

/** Token counts of one turn; null where the provider reported none (null is not zero). */
export interface TurnUsage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

export interface ModelTurnResult {
  text: string;
  toolCalls: ToolCall[];
  usage: TurnUsage;
  finishReason: string;
}

/** One turn of the `scripted` provider's script (see activities/models/scripted.ts). */
export interface ScriptTurn {
  text?: string;
  tool_calls?: Array<{ tool: string; arguments?: Record<string, unknown> }>;
  /** Omitted: counted from the text; null: the provider reported no usage. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** Stream slowly: the turn takes about this long in total (for cancel and crash tests). */
  delay_ms?: number;
}

export interface ModelTurnRequest {
  /** `provider/model`, e.g. `openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5`, `ollama/llama3.2`, or `scripted`. */
  model: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  /** For `scripted`: the node's script, and which of its turns this is (0-based). */
  script?: ScriptTurn[];
  scriptPosition?: number;
  temperature?: number;
  maxOutputTokens?: number;
}

export interface ModelTurnCallbacks {
  /** Aborts the provider request (activity cancellation). */
  signal: AbortSignal;
  /** Called with each piece of streamed text, in order. */
  onTextDelta(delta: string): void | Promise<void>;
}
