import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { agentRunFailure } from '../../workflows/agent-run-api.js';
import type { Db } from '../../db/database.js';
import { appendRunEventsNow } from '../../db/run-events.js';
import { crashPoint } from '../crash-points.js';
import { DeltaBuffer } from './delta-buffer.js';
import { enforceGuardrails } from '../guardrails/enforce.js';
import { isRetryableModelError } from './errors.js';
import { earlierTurn, recordedTurn, turnCompletedEvent } from './recorded-turn.js';
import { streamModelTurn } from './provider.js';
import { workspaceModelSettings } from './workspace-connections.js';
import type { GuardedTurnResult, ModelTurnInput } from '../runs/types.js';

const HEARTBEAT_EVERY_MS = 1000;

/**
 * One model turn, streamed: text deltas become `message.delta` events as they arrive, the whole turn a
 * `message.completed`. Heartbeats carry cancellation in (the provider request is aborted) and let
 * Temporal notice a dead worker; a retry starts with `attempt.reset` so clients drop the partial text,
 * unless the turn had already finished (activities/models/recorded-turn.ts). As a local activity
 * (RUN_CALLS=local) it asks the log on every run, as it cannot tell a retry from its attempt.
 *
 * With output guardrails in force, no delta leaves before the turn's whole text has passed them: the
 * text is held, checked (redacted, or the run blocked), and only then released, as one delta. A client
 * can never have received a span that a guardrail later redacts.
 */
export async function callModel(db: Db, input: ModelTurnInput): Promise<GuardedTurnResult> {
  const context = Context.current();
  const append = (events: Parameters<typeof appendRunEventsNow>[3]) => appendRunEventsNow(db, input.tenantId, input.runId, events);
  if (context.info.attempt > 1 || context.info.isLocal) {
    const earlier = await earlierTurn(db, input);
    if (earlier.recorded) return earlier.recorded;
    if (context.info.attempt > 1 || earlier.streamed) {
      await append([{ type: 'attempt.reset', data: { node_id: input.nodeId, turn: input.turn, attempt: context.info.attempt } }]);
    }
  }

  const deltas = new DeltaBuffer(async (batch) => {
    await append(batch.map((delta) => ({ type: 'message.delta', data: { node_id: input.nodeId, turn: input.turn, delta } })));
  });
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  const holdBack = input.outputGuardrails.length > 0;
  let result: GuardedTurnResult;
  try {
    result = await streamModelTurn(
      {
        model: input.model,
        messages: input.messages,
        tools: input.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
        script: input.script ?? undefined,
        scriptPosition: input.scriptPosition,
        temperature: input.temperature ?? undefined,
      },
      { signal: context.cancellationSignal, onTextDelta: (delta) => (holdBack ? undefined : deltas.push(delta)) },
      workspaceModelSettings(db, input.tenantId),
    );
    if (holdBack && result.text) {
      const spent = [{ model: input.model, usage: result.usage }];
      const checked = await enforceGuardrails(db, input, input.outputGuardrails, 'output', result.text, `turn:${input.turn}`, context.cancellationSignal, spent);
      result = { ...result, text: checked.text, guardrailTurns: checked.turns };
      deltas.push(checked.text);
    }
    await deltas.flush();
  } catch (err) {
    await deltas.flush().catch(() => undefined);
    if (context.cancellationSignal.aborted) throw new CancelledFailure('model call cancelled');
    if (err instanceof ApplicationFailure) throw err; // a guardrail's verdict
    if (!isRetryableModelError(err)) {
      throw agentRunFailure('ModelConfiguration', (err as Error).message);
    }
    throw err;
  } finally {
    clearInterval(heartbeat);
  }

  const [recordedAs] = await append([turnCompletedEvent(input, result)]);
  // Another attempt recorded the turn first (this one outlived its heartbeat timeout): the run goes on
  // with what the log says.
  if (recordedAs === undefined) return (await recordedTurn(db, input)) ?? result;
  await crashPoint('model-turn.unrecorded', input);
  return result;
}
