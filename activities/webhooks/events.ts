/** The events a subscription can ask for (docs/webhooks.md has each one's `data`). */
export const WEBHOOK_EVENT_TYPES = [
  'run.completed',
  'run.failed',
  'run.cancelled',
  'run.paused',
  'experiment.completed',
  'experiment.failed',
  'experiment.cancelled',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What `POST /v1/webhooks/{id}/ping` sends: to that subscription only, whatever its events. */
export const PING_EVENT_TYPE = 'webhook.ping';

/** The Standard Webhooks body: every attempt of an event sends these exact bytes. */
export function webhookPayload(type: string, occurredAt: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: occurredAt.toISOString(), data });
}
