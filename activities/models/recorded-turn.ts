import type { Db } from '../../db/database.js';
import { findLastTurnEvent, findRunEventByDedupeKey, type NewRunEvent } from '../../db/run-events.js';
import type { RunEvent } from '../../db/schema.js';
import type { GuardedTurnResult, ModelTurnInput, ModelTurnUsage, ToolCall, TurnUsage } from '../runs/types.js';

/**
 * A model turn's `message.completed` event is its durable result. The event is stored before the
 * activity returns, so a worker that dies between the two leaves a turn that is finished in Postgres but
 * not in Temporal's history. The retry answers the stored turn instead of asking the model again: the
 * provider is not paid twice, and the log never shows one answer while the run goes on with another
 * (a real model answers differently each time; the event's dedupe key would keep the first).
 */

function dedupeKey(turn: number): string {
  return `message.completed:${turn}`;
}

/** The event that records a finished turn; it carries everything the workflow needs from the turn. */
export function turnCompletedEvent(input: ModelTurnInput, result: GuardedTurnResult): NewRunEvent {
  return {
    type: 'message.completed',
    dedupeKey: dedupeKey(input.turn),
    data: {
      node_id: input.nodeId,
      turn: input.turn,
      text: result.text,
      tool_calls: result.toolCalls,
      usage: result.usage,
      finish_reason: result.finishReason,
      ...(result.guardrailTurns?.length ? { guardrail_usage: result.guardrailTurns } : {}),
    },
  };
}

/** The turn as recorded by an earlier attempt, or undefined when none finished it. */
export async function recordedTurn(db: Db, input: ModelTurnInput): Promise<GuardedTurnResult | undefined> {
  const event = await findRunEventByDedupeKey(db, input.tenantId, input.runId, dedupeKey(input.turn));
  return event && turnOf(event);
}

/**
 * What an earlier run of this turn left: the recorded turn, or whether it streamed text that clients
 * must drop. A local activity runs again at attempt 1 after its worker died (activities/runs/run-calls.ts),
 * so it cannot tell from its attempt that it is a retry, and asks the log.
 */
export async function earlierTurn(db: Db, input: ModelTurnInput): Promise<{ recorded?: GuardedTurnResult; streamed: boolean }> {
  const event = await findLastTurnEvent(db, input.tenantId, input.runId, input.turn, dedupeKey(input.turn));
  if (event?.type === 'message.completed') return { recorded: turnOf(event), streamed: true };
  return { streamed: event !== undefined };
}

function turnOf(event: RunEvent): GuardedTurnResult {
  const data = event.data as { text: string; tool_calls: ToolCall[]; usage: TurnUsage; finish_reason?: string; guardrail_usage?: ModelTurnUsage[] };
  return {
    text: data.text,
    toolCalls: data.tool_calls,
    usage: data.usage,
    finishReason: data.finish_reason ?? 'stop',
    ...(data.guardrail_usage ? { guardrailTurns: data.guardrail_usage } : {}),
  };
}
