import { signMessage } from '../standard-webhooks/signature.js';

/** The headers of one attempt: the message id is the event's, the same on every attempt and redelivery. */
export function webhookHeaders(secret: string, messageId: string, sentAt: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'agent-platform-webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signMessage(secret, messageId, timestamp, body),
  };
}
