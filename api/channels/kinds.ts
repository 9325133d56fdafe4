import type { Channel, ChannelKind } from '../../db/schema.js';
import type { AppDeps } from '../deps.js';
import type { JsonSchema, Reply } from '../operation.js';
import { voiceChannel } from './voice-kind.js';
import { webhookChannel } from './webhook-kind.js';

/** A message that passed its channel's signature check, and has not been seen before or has (`replayOf`). */
export interface InboundMessage {
  deps: AppDeps;
  tenantId: string;
  channel: Channel;
  /** `webhook-id`: unique per message, the same on every delivery of it. */
  messageId: string;
  /** The parsed JSON body, not yet checked against the kind's schema. */
  body: unknown;
  /** Aborts when the sender hangs up before the answer: nothing is left to wait for. */
  signal: AbortSignal;
}

/** What one kind of channel takes at its address and how it answers. */
export interface ChannelKindHandler {
  kind: ChannelKind;
  /** The bodies its address takes (each one of the `oneOf` the OpenAPI document gives the inbound operation). */
  bodySchemas: JsonSchema[];
  /** The answers it gives, by status. */
  responses: Record<number, { description: string; schema: JsonSchema }>;
  receive(message: InboundMessage): Promise<Reply>;
}

/** Every kind of channel, one file each. */
export const CHANNEL_KINDS: Record<ChannelKind, ChannelKindHandler> = {
  webhook: webhookChannel,
  voice: voiceChannel,
};
