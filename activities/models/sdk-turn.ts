import { streamText, type LanguageModel } from 'ai';
import { InvalidModelOutputError } from './errors.js';
import { toModelMessages, toToolSet } from './messages.js';
import type { ModelTurnCallbacks, ModelTurnRequest, ModelTurnResult, ToolCall, TurnUsage } from './types.js';
import { turnUsageFromSdk } from './usage.js';

/**
 * One model turn through the AI SDK, for every provider it speaks to (OpenAI, Anthropic,
 * OpenAI-compatible servers). A single step: the SDK reports tool calls, it never runs them.
 * Cancellation rejects with the signal's reason, so the activity sees its own cancellation.
 */
export async function streamSdkTurn(model: LanguageModel, request: ModelTurnRequest, callbacks: ModelTurnCallbacks): Promise<ModelTurnResult> {
  const { signal } = callbacks;
  const stream = streamText({
    model,
    messages: toModelMessages(request.messages),
    // Our system messages come from the agent's configuration, never from a role a client sent.
    allowSystemInMessages: true,
    tools: toToolSet(request.tools),
    temperature: request.temperature,
    maxOutputTokens: request.maxOutputTokens,
    abortSignal: signal,
    maxRetries: 0, // Temporal retries the whole activity
    onError: () => {}, // errors arrive as stream parts, thrown below; the SDK would also log them
  });

  let text = '';
  const toolCalls: ToolCall[] = [];
  let finishReason = 'unknown';
  let usage: TurnUsage = { prompt_tokens: null, completion_tokens: null };
  try {
    for await (const part of stream.fullStream) {
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          await callbacks.onTextDelta(part.text);
          break;
        case 'tool-call':
          toolCalls.push(toolCallFrom(part));
          break;
        case 'finish':
          finishReason = part.finishReason;
          usage = turnUsageFromSdk(part.totalUsage);
          break;
        case 'error':
          throw part.error;
        case 'abort':
          throw signal.reason;
      }
    }
  } catch (error) {
    // Whatever broke once the signal fired (a reset socket, a half-read chunk) is the cancellation.
    signal.throwIfAborted();
    throw error;
  }
  return { text, toolCalls, usage, finishReason };
}

/**
 * Calls to tools the model was not offered pass through, for the caller to answer (an error result
 * the model can read); arguments that are not a JSON object cannot be represented at all.
 */
function toolCallFrom(part: { toolCallId: string; toolName: string; input: unknown }): ToolCall {
  const { input } = part;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const shown = JSON.stringify(input);
    throw new InvalidModelOutputError(`the model called tool '${part.toolName}' with arguments that are not a JSON object: ${shown}`);
  }
  return { id: part.toolCallId, tool: part.toolName, arguments: input as Record<string, unknown> };
}
