import { recordChannelMessage, takeChannelMessage } from '../../db/channel-messages.js';
import { findRun } from '../../db/runs.js';
import type { CallDirection, Run } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { insertCallTurn } from '../../db/voice-call-turns.js';
import { endCall, openCall, setCallThread } from '../../db/voice-calls.js';
import { ApiError } from '../errors.js';
import type { JsonSchema, Reply } from '../operation.js';
import { closedObject } from '../schemas.js';
import { requestValidator } from '../validation.js';
import { queueChannelRun, startChannelRun, takeChannelRunToken, type ChannelRun } from './channel-runs.js';
import type { ChannelKindHandler, InboundMessage } from './kinds.js';
import { runWhenSettled } from './run-settled.js';

/**
 * A `voice` channel: a telephony provider posts a call's events as its speech-to-text makes them.
 * Each caller turn (`call.turn`) is a run of the agent in the call's thread, and the answer waits for
 * that run (at most VOICE_REPLY_WAIT_MS) to give its output as the agent's reply, to be spoken; a
 * `call.ended` event closes the call with its duration. The calls are read at /v1/voice/calls.
 */

/** How long a turn's answer waits for the run: telephony webhooks time out at 10 to 15 s. */
export const VOICE_REPLY_WAIT_MS = 8_000;

const party: JsonSchema = { type: 'string', minLength: 1, maxLength: 64, description: 'A phone number (E.164 such as `+14155550100`) or a SIP address.' };
const callFields: Record<string, JsonSchema> = {
  call_id: { type: 'string', minLength: 1, maxLength: 200, description: "The provider's id of the call: every event of one call carries it." },
  direction: { enum: ['inbound', 'outbound'], description: '`inbound`: the caller rang the agent; `outbound`: the agent rang out.' },
  from: party,
  to: party,
};
const turnSchema: JsonSchema = closedObject(
  {
    type: { const: 'call.turn' },
    ...callFields,
    turn: closedObject(
      {
        text: { type: 'string', minLength: 1, maxLength: 20_000, description: "What the caller said, as transcribed: the run's input." },
        confidence: { type: 'number', minimum: 0, maximum: 1, description: "The speech-to-text's confidence, kept with the turn." },
      },
      { required: ['text'] },
    ),
  },
  { required: ['type', 'call_id', 'direction', 'from', 'to', 'turn'] },
);
const endedSchema: JsonSchema = closedObject(
  {
    type: { const: 'call.ended' },
    ...callFields,
    duration_seconds: { type: 'integer', minimum: 0, maximum: 604_800, description: 'How long the call lasted, as the provider measured it.' },
  },
  { required: ['type', 'call_id', 'direction', 'from', 'to', 'duration_seconds'] },
);
const validators: Record<string, (body: unknown) => void> = { 'call.turn': requestValidator('body', turnSchema), 'call.ended': requestValidator('body', endedSchema) };
const validateType = requestValidator('body', { type: 'object', required: ['type'], properties: { type: { enum: Object.keys(validators) } } });

interface CallEvent {
  type: 'call.turn' | 'call.ended';
  call_id: string;
  direction: CallDirection;
  from: string;
  to: string;
  turn?: { text: string; confidence?: number };
  duration_seconds?: number;
}

const replySchema = closedObject({
  call_id: { type: 'string', description: 'The call record: GET /v1/voice/calls/{id}.' },
  run_id: { type: ['string', 'null'], description: "The run the caller's turn started; null for `call.ended`." },
  status: {
    enum: ['completed', 'failed', 'cancelled', 'paused', 'pending', 'ended'],
    description:
      "The turn's run as the answer leaves: `completed` (speak `reply`), `failed` or `cancelled` (no reply), `paused` (it waits for an `ask_human` answer " +
      'through POST /v1/runs/{id}/answer), `pending` (still running after 8 s: it goes on, and its output joins the transcript). `ended` answers `call.ended`.',
  },
  reply: { type: ['string', 'null'], description: "The agent's reply to speak: the run's output when `completed`, else null." },
  replayed: { type: 'boolean', description: 'true when this message id was taken before: nothing new was started; this answers for the first delivery.' },
});

export const voiceChannel: ChannelKindHandler = {
  kind: 'voice',
  bodySchemas: [turnSchema, endedSchema],
  responses: { 200: { description: "A voice channel took the call event: for a caller's turn, the agent's reply", schema: replySchema } },
  async receive(message) {
    validateType(message.body);
    validators[(message.body as { type: string }).type]!(message.body);
    const event = message.body as CallEvent;
    return event.type === 'call.turn' ? receiveTurn(message, event) : receiveEnd(message, event);
  },
};

async function receiveTurn({ deps, tenantId, channel, messageId, signal }: InboundMessage, event: CallEvent): Promise<Reply> {
  // A replay starts nothing, so it takes no run token; the transaction below checks again under the message's lock.
  const earlier = await withTenant(deps.db, tenantId, (tx) => takeChannelMessage(tx, channel.id, messageId));
  const rateHeaders = earlier ? {} : await takeChannelRunToken(deps, tenantId, channel.id);
  const outcome = await withTenant(deps.db, tenantId, async (tx) => {
    const taken = await takeChannelMessage(tx, channel.id, messageId);
    // A message id the first delivery used for a `call.ended` (a sender's mistake) started no run either.
    if (taken?.runId === null) return { replayed: true, callId: taken.callId! };
    if (taken) {
      const run = await findRun(tx, tenantId, taken.runId);
      if (!run) throw runGone(messageId);
      return { replayed: true, callId: taken.callId!, run };
    }
    const call = await openCall(tx, tenantId, { channelId: channel.id, agentId: channel.agent_id, providerCallId: event.call_id, direction: event.direction, from: event.from, to: event.to });
    if (call.ended_at) throw new ApiError('conflict', `call '${event.call_id}' has ended; it takes no more turns`);
    const started: ChannelRun = await queueChannelRun(tx, { tenantId, agentId: call.agent_id, channelId: channel.id, input: event.turn!.text, threadId: call.thread_id ?? undefined });
    if (started.threadId !== call.thread_id) await setCallThread(tx, tenantId, call.id, started.threadId);
    await insertCallTurn(tx, tenantId, call.id, { text: event.turn!.text, confidence: event.turn!.confidence ?? null, runId: started.runId });
    await recordChannelMessage(tx, tenantId, channel.id, messageId, { runId: started.runId, callId: call.id });
    return { replayed: false, callId: call.id, started };
  });
  let runId: string;
  if (outcome.started) {
    await startChannelRun(deps, outcome.started);
    runId = outcome.started.runId;
  } else if (outcome.run) {
    await startChannelRun(deps, outcome.run);
    runId = outcome.run.id;
  } else {
    return { status: 200, body: { call_id: outcome.callId, run_id: null, status: 'ended', reply: null, replayed: true }, headers: rateHeaders };
  }
  const run = await runWhenSettled(deps, tenantId, runId, VOICE_REPLY_WAIT_MS, signal);
  if (!run) throw runGone(messageId);
  return { status: 200, body: { call_id: outcome.callId, run_id: run.id, ...replyOf(run), replayed: outcome.replayed }, headers: rateHeaders };
}

/** The turn's run was deleted (with its agent) while the call went on. */
function runGone(messageId: string): ApiError {
  return new ApiError('conflict', `the run of message '${messageId}' is gone`);
}

function replyOf(run: Run): { status: string; reply: string | null } {
  if (run.status === 'completed') return { status: 'completed', reply: run.output ?? '' };
  if (run.status === 'queued' || run.status === 'running') return { status: 'pending', reply: null };
  return { status: run.status, reply: null };
}

async function receiveEnd({ deps, tenantId, channel, messageId }: InboundMessage, event: CallEvent): Promise<Reply> {
  const { callId, replayed } = await withTenant(deps.db, tenantId, async (tx) => {
    const taken = await takeChannelMessage(tx, channel.id, messageId);
    if (taken) return { callId: taken.callId!, replayed: true };
    const call = await openCall(tx, tenantId, { channelId: channel.id, agentId: channel.agent_id, providerCallId: event.call_id, direction: event.direction, from: event.from, to: event.to });
    // The first end counts: a provider that reports it twice under two message ids does not move it.
    if (!call.ended_at) await endCall(tx, tenantId, call.id, event.duration_seconds!);
    await recordChannelMessage(tx, tenantId, channel.id, messageId, { runId: null, callId: call.id });
    return { callId: call.id, replayed: false };
  });
  return { status: 200, body: { call_id: callId, run_id: null, status: 'ended', reply: null, replayed } };
}
