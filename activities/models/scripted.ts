/**
 * The `scripted` provider: a real provider of the registry (model id `scripted` or
 * `scripted/<anything>`) that replays a script instead of asking a model, for tests, demos and evals.
 *
 * A node's script is a list of turns; model turn N of the node (`request.scriptPosition`, 0-based)
 * answers with `request.script[N]`:
 *   - `text` is streamed word by word (each delta a word with its surrounding whitespace);
 *   - `tool_calls` become calls with ids `call_<position>_<index>` and `{}` for omitted arguments;
 *     a turn may have both, and one with neither answers empty text;
 *   - `usage` is reported as given; `null` reports none (both counts null, as a provider without
 *     usage would); omitted, it is counted: prompt = characters of all message contents / 4,
 *     completion = characters of the text / 4, each rounded up and at least 1;
 *   - `delay_ms` spreads that much waiting across the deltas, and the activity's signal cuts it short.
 * A turn past the end of the script is a ModelConfigurationError: retrying replays the same script.
 * Prices for `scripted` are in prices.ts.
 */
import { ModelConfigurationError } from './errors.js';
import type { ChatMessage, ModelTurnCallbacks, ModelTurnRequest, ModelTurnResult, ScriptTurn, ToolCall, TurnUsage } from './types.js';

export async function streamScriptedTurn(request: ModelTurnRequest, callbacks: ModelTurnCallbacks): Promise<ModelTurnResult> {
  const { signal } = callbacks;
  const position = request.scriptPosition ?? 0;
  const script = request.script ?? [];
  const turn = script[position];
  if (!turn) {
    throw new ModelConfigurationError(
      `script exhausted: model '${request.model}' was asked for turn ${position + 1} but its script has ${script.length} turn(s)`,
    );
  }
  signal.throwIfAborted();

  const text = turn.text ?? '';
  const deltas = textDeltas(text);
  const pauseMs = (turn.delay_ms ?? 0) / Math.max(deltas.length, 1);
  if (deltas.length === 0) await sleep(pauseMs, signal);
  for (const delta of deltas) {
    await sleep(pauseMs, signal);
    await callbacks.onTextDelta(delta);
  }

  const toolCalls: ToolCall[] = (turn.tool_calls ?? []).map((call, index) => ({
    id: `call_${position}_${index}`,
    tool: call.tool,
    arguments: call.arguments ?? {},
  }));
  return {
    text,
    toolCalls,
    usage: scriptedUsage(turn, request.messages, text),
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
  };
}

/** Words with their surrounding whitespace, so the deltas join back to exactly the text. */
function textDeltas(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+\s*/g) ?? [text]; // whitespace-only text has no words: one delta
}

function scriptedUsage(turn: ScriptTurn, messages: ChatMessage[], text: string): TurnUsage {
  if (turn.usage === null) return { prompt_tokens: null, completion_tokens: null };
  if (turn.usage) return { prompt_tokens: turn.usage.prompt_tokens, completion_tokens: turn.usage.completion_tokens };
  const promptChars = messages.reduce((sum, message) => sum + message.content.length, 0);
  return { prompt_tokens: estimatedTokens(promptChars), completion_tokens: estimatedTokens(text.length) };
}

function estimatedTokens(characters: number): number {
  return Math.max(1, Math.ceil(characters / 4));
}

/** Waits, or rejects with the signal's reason as soon as it fires. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve().then(() => signal.throwIfAborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
