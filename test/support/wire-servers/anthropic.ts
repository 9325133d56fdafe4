import type { ReceivedRequest, SseEvent, WireReply } from './sse-server.js';

/** One streamed Messages answer, described by what the model "says". */
export interface MessageScript {
  /** The text, already cut into the deltas to send. */
  text?: string[];
  /** Each tool_use block's input arrives as `input_json_delta` fragments. */
  toolUses?: Array<{ id: string; name: string; jsonFragments: string[] }>;
  usage: { input_tokens: number; output_tokens: number };
  pauseMs?: number;
}

/**
 * The Messages SSE stream (`POST /v1/messages` with `stream: true`): message_start (with the input
 * token count), one content block per text or tool_use (start, deltas, stop), pings, message_delta
 * (stop_reason and the output token count) and message_stop.
 */
export function messageStream(request: ReceivedRequest, script: MessageScript): WireReply {
  const events: SseEvent[] = [];
  const send = (type: string, data: Record<string, unknown>) => events.push({ event: type, data: { type, ...data } });

  send('message_start', {
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: request.body?.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: script.usage.input_tokens, output_tokens: 1 },
    },
  });
  let index = 0;
  if (script.text) {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    send('ping', {});
    for (const text of script.text) send('content_block_delta', { index, delta: { type: 'text_delta', text } });
    send('content_block_stop', { index });
    index++;
  }
  for (const use of script.toolUses ?? []) {
    send('content_block_start', { index, content_block: { type: 'tool_use', id: use.id, name: use.name, input: {} } });
    for (const partial_json of use.jsonFragments) send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    send('content_block_stop', { index });
    index++;
  }
  send('message_delta', {
    delta: { stop_reason: script.toolUses?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: script.usage.output_tokens },
  });
  send('message_stop', {});
  return { kind: 'sse', events, pauseMs: script.pauseMs };
}
