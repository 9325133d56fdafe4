import { TASK_QUEUES } from './task-queues.js';

/**
 * The contract of one webhook delivery (docs/webhooks.md): a `deliverWebhook` workflow makes attempts
 * (each an activity that signs, sends and records) with exponential back-off until one is answered 2xx,
 * the endpoint answers 410 Gone, or the back-off window (24 h by default) is spent. Its workflow id is
 * deterministic (deliverWebhookWorkflowId), so an emission retried after a crash starts no second one.
 */

export const DELIVER_WEBHOOK_WORKFLOW_TYPE = 'deliverWebhook';
export const DELIVER_WEBHOOK_TASK_QUEUE = TASK_QUEUES.runs;

export interface WebhookBackoff {
  /** The wait after the first failed attempt; each later wait doubles, up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  /** No attempt is started later than this after the first. */
  windowMs: number;
}

export const DEFAULT_WEBHOOK_BACKOFF: WebhookBackoff = { initialMs: 5_000, maxMs: 2 * 3600_000, windowMs: 24 * 3600_000 };

export interface DeliverWebhookInput {
  tenantId: string;
  deliveryId: string;
  /** Which series of attempts (1, then one more per manual redelivery): a superseded series stops. */
  series: number;
  backoff: WebhookBackoff;
}

export interface WebhookAttemptInput {
  tenantId: string;
  deliveryId: string;
  series: number;
  number: number;
  /** When the next attempt would come, if this one fails; null: this is the last one. */
  nextAttemptInMs: number | null;
}

/** What the workflow records when it cannot go on (its attempt activity failed for good): the delivery ends as failed. */
export interface WebhookGiveUpInput {
  tenantId: string;
  deliveryId: string;
  series: number;
  reason: string;
}

/** An attempt activity's start-to-close timeout: well above any attempt's own HTTP timeout (WEBHOOK_ATTEMPT_TIMEOUT_MS is capped below it), so only a dead worker makes it retry. */
export const WEBHOOK_ATTEMPT_ACTIVITY_TIMEOUT_MS = 60_000;
/** The longest HTTP timeout an attempt may have: the rest of the activity's timeout is for signing and recording. */
export const MAX_WEBHOOK_ATTEMPT_TIMEOUT_MS = WEBHOOK_ATTEMPT_ACTIVITY_TIMEOUT_MS - 15_000;

/** `retry`: failed, another attempt follows; the rest end the delivery. `stopped`: the delivery or its subscription is gone, disabled or superseded. */
export type WebhookAttemptResult = 'delivered' | 'failed' | 'retry' | 'stopped';

export interface DeliverWebhookResult {
  status: Exclude<WebhookAttemptResult, 'retry'>;
  attempts: number;
}

export function deliverWebhookWorkflowId(webhookId: string, eventId: string, series: number): string {
  return series === 1 ? `webhook:${webhookId}:${eventId}` : `webhook:${webhookId}:${eventId}:${series}`;
}

/** The wait after failed attempt `number` (1-based). */
export function backoffDelayMs(backoff: WebhookBackoff, number: number): number {
  return Math.min(backoff.initialMs * 2 ** Math.min(number - 1, 40), backoff.maxMs);
}
