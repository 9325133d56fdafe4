import { jsonSchema, tool, type JSONSchema7, type ModelMessage, type ToolResultPart, type ToolSet } from 'ai';
import type { ChatMessage, ToolDefinition } from './types.js';

/** Our provider-neutral conversation in the AI SDK's terms, which each provider package translates to its wire format. */
export function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  const converted: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        converted.push({ role: message.role, content: message.content });
        break;
      case 'assistant':
        converted.push(assistantMessage(message));
        break;
      case 'tool': {
        // Results answering one assistant turn travel together, as Anthropic requires.
        const previous = converted.at(-1);
        if (previous?.role === 'tool') previous.content.push(toolResultPart(message));
        else converted.push({ role: 'tool', content: [toolResultPart(message)] });
        break;
      }
    }
  }
  return converted;
}

function assistantMessage(message: Extract<ChatMessage, { role: 'assistant' }>): ModelMessage {
  if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
  return {
    role: 'assistant',
    content: [
      // Anthropic rejects empty text blocks, and a turn that only calls tools has no text.
      ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
      ...message.toolCalls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.tool, input: call.arguments })),
    ],
  };
}

function toolResultPart(message: Extract<ChatMessage, { role: 'tool' }>): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    // `error-text` becomes Anthropic's `is_error: true`; OpenAI sends both as plain tool content.
    output: message.isError ? { type: 'error-text', value: message.content } : { type: 'text', value: message.content },
  };
}

/**
 * The tools as the model sees them. There is no `execute`: the SDK only reports the calls, and the
 * workflow runs them as durable steps.
 */
export function toToolSet(tools: ToolDefinition[]): ToolSet {
  return Object.fromEntries(
    tools.map((definition) => [
      definition.name,
      tool({ description: definition.description, inputSchema: jsonSchema<Record<string, unknown>>(definition.parameters as JSONSchema7) }),
    ]),
  );
}
