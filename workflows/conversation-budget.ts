import type { ChatMessage } from '../activities/models/types.js';
import { agentRunFailure } from './agent-run-api.js';

/**
 * The most characters one node's conversation may hold: its system prompt, the thread's earlier turns,
 * its input, the model's turns with their tool calls, and the tool results.
 *
 * Why a limit: the conversation lives in the workflow and is serialized whole for every model turn.
 * Tool results have no size of their own to stop them (`verify_plan` returns the whole plan, a turn may
 * ask for any number of calls), so a graph — a scripted one at once — could grow it to hundreds of MB:
 * seconds of serializing inside one workflow activation, or a worker out of memory. A million characters
 * is ~250k tokens: past most models' context, though short of the 1M-token ones (GPT-4.1), whose whole
 * window a run cannot fill; and under Temporal's 2 MB payload limit for an activity's input in ASCII text,
 * where a model turn as an activity failed before (a limit kept below it fails the run cleanly instead).
 */
export const MAX_CONVERSATION_CHARS = 1_000_000;

/** A node's conversation, counted as it grows; the run fails with `context_length_exceeded` past the limit. */
export class ConversationBudget {
  private chars = 0;

  /** `limited`: false for runs started before the limit (workflows/agent-run-api.ts AGENT_RUN_VERSION). */
  constructor(
    private readonly nodeId: string,
    readonly messages: ChatMessage[],
    private readonly limited: boolean,
  ) {
    this.count(messages);
  }

  /** Adds messages, failing the run once the conversation outgrows the limit (before it grows further). */
  push(...messages: ChatMessage[]): void {
    this.messages.push(...messages);
    this.count(messages);
  }

  private count(messages: ChatMessage[]): void {
    for (const message of messages) {
      this.chars += message.content.length;
      if (message.role === 'assistant' && message.toolCalls) this.chars += JSON.stringify(message.toolCalls).length;
    }
    if (this.limited && this.chars > MAX_CONVERSATION_CHARS) {
      throw agentRunFailure(
        'ConversationTooLong',
        `the conversation of node '${this.nodeId}' reached ${this.chars} characters, over the limit of ${MAX_CONVERSATION_CHARS} ` +
          "(the thread's earlier turns, tool calls and tool results included): start a new thread, or have tools return less",
      );
    }
  }
}
