import type { ReceivedRequest, SseEvent, WireReply } from './sse-server.js';

/** One streamed Chat Completions answer, described by what the model "says". */
export interface ChatCompletionScript {
  /** The text, already cut into the deltas to send. */
  text?: string[];
  /** Each call's arguments arrive in fragments, as OpenAI streams them. */
  toolCalls?: Array<{ id: string; name: string; argumentFragments: string[] }>;
  /** Sent only when the request asked for `stream_options.include_usage`; null: never sent. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  pauseMs?: number;
}

/**
 * The Chat Completions SSE stream (`POST /v1/chat/completions` with `stream: true`): a role chunk,
 * content deltas, tool_call deltas keyed by index (id and name first, then argument fragments), the
 * finish_reason chunk, a choices-less usage chunk when asked for, and `[DONE]`.
 */
export function chatCompletionStream(request: ReceivedRequest, script: ChatCompletionScript): WireReply {
  const includeUsage = request.body?.stream_options?.include_usage === true;
  const chunk = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}): SseEvent => ({
    data: {
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model: request.body?.model,
      choices: choice ? [{ index: 0, logprobs: null, ...choice }] : [],
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    },
  });

  const events: SseEvent[] = [chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })];
  for (const text of script.text ?? []) events.push(chunk({ delta: { content: text }, finish_reason: null }));
  (script.toolCalls ?? []).forEach((call, index) => {
    events.push(chunk({ delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }));
    for (const fragment of call.argumentFragments) {
      events.push(chunk({ delta: { tool_calls: [{ index, function: { arguments: fragment } }] }, finish_reason: null }));
    }
  });
  events.push(chunk({ delta: {}, finish_reason: script.toolCalls?.length ? 'tool_calls' : 'stop' }));
  if (includeUsage && script.usage) {
    const { prompt_tokens, completion_tokens } = script.usage;
    events.push(chunk(null, { usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens } }));
  }
  events.push({ data: '[DONE]' });
  return { kind: 'sse', events, pauseMs: script.pauseMs };
}
