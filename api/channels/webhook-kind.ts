import { recordChannelMessage, takeChannelMessage } from '../../db/channel-messages.js';
import { lockSenderThread, saveSenderThread } from '../../db/channel-senders.js';
import { findRun } from '../../db/runs.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { ApiError } from '../errors.js';
import type { JsonSchema } from '../operation.js';
import { closedObject } from '../schemas.js';
import { requestValidator } from '../validation.js';
import { queueChannelRun, startChannelRun, takeChannelRunToken } from './channel-runs.js';
import type { ChannelKindHandler } from './kinds.js';

/**
 * A `webhook` channel: each message starts a run of the channel's agent with the message's text as
 * input, in the thread of its sender (the same sender continues the same thread), and is answered at
 * once with the run's id (202); the run's outcome is read or streamed through /v1/runs.
 */

const messageSchema: JsonSchema = closedObject(
  {
    sender: { type: 'string', minLength: 1, maxLength: 200, description: "Who sent it (a user id, an address): each sender has a thread of its own, continued by the sender's next messages." },
    text: { type: 'string', minLength: 1, maxLength: 200_000, description: "The message: the run's input." },
  },
  { required: ['sender', 'text'] },
);
const validateMessage = requestValidator('body', messageSchema);

const acceptedSchema = closedObject({
  run_id: { type: 'string' },
  thread_id: { type: 'string' },
  replayed: { type: 'boolean', description: 'true when this message id was taken before: nothing was started, and this is the run the first delivery started.' },
});

export const webhookChannel: ChannelKindHandler = {
  kind: 'webhook',
  bodySchemas: [messageSchema],
  responses: { 202: { description: 'A webhook channel took the message: the run it started (or, for a replay, started before)', schema: acceptedSchema } },
  async receive({ deps, tenantId, channel, messageId, body }) {
    validateMessage(body);
    const message = body as { sender: string; text: string };
    // A replay starts nothing, so it takes no run token; the transaction below checks again under the message's lock.
    const earlier = await withTenant(deps.db, tenantId, (tx) => takeChannelMessage(tx, channel.id, messageId));
    const rateHeaders = earlier ? {} : await takeChannelRunToken(deps, tenantId, channel.id);
    const outcome = await withTenant(deps.db, tenantId, async (tx) => {
      const taken = await takeChannelMessage(tx, channel.id, messageId);
      const replayOf = taken?.runId ? await findRun(tx, tenantId, taken.runId) : undefined;
      if (taken && !replayOf) throw new ApiError('conflict', `message '${messageId}' was taken before, and its run is gone`);
      if (replayOf) return { replayOf };
      const threadId = await lockSenderThread(tx, channel.id, message.sender);
      const run = await queueChannelRun(tx, { tenantId, agentId: channel.agent_id, channelId: channel.id, input: message.text, threadId });
      if (run.threadId !== threadId) await saveSenderThread(tx, tenantId, channel.id, message.sender, run.threadId);
      await recordChannelMessage(tx, tenantId, channel.id, messageId, { runId: run.runId, callId: null });
      return { started: run };
    });
    if (outcome.started) {
      await startChannelRun(deps, outcome.started);
      return { status: 202, body: { run_id: outcome.started.runId, thread_id: outcome.started.threadId, replayed: false }, headers: rateHeaders };
    }
    await startChannelRun(deps, outcome.replayOf!);
    return { status: 202, body: { run_id: outcome.replayOf!.id, thread_id: outcome.replayOf!.thread_id, replayed: true }, headers: rateHeaders };
  },
};
