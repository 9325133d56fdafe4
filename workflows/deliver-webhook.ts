import { ActivityFailure, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import {
  backoffDelayMs,
  WEBHOOK_ATTEMPT_ACTIVITY_TIMEOUT_MS,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
} from './deliver-webhook-api.js';

// An attempt's own HTTP timeout is capped below this; the activity retries only when a worker died mid-attempt or Postgres is away.
const { attemptWebhookDelivery } = proxyActivities<Activities>({ startToCloseTimeout: WEBHOOK_ATTEMPT_ACTIVITY_TIMEOUT_MS, retry: BOOKKEEPING_RETRY });
// Recording the end must not give up in turn (a delivery left `pending` would never end): it retries until Postgres is back.
const { giveUpWebhookDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** One delivery's attempts (workflows/deliver-webhook-api.ts), each recorded by its activity. */
export async function deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  const startedAt = Date.now();
  for (let number = 1; ; number++) {
    const delay = backoffDelayMs(input.backoff, number);
    const last = Date.now() + delay - startedAt > input.backoff.windowMs;
    let result;
    try {
      result = await attemptWebhookDelivery({ tenantId: input.tenantId, deliveryId: input.deliveryId, series: input.series, number, nextAttemptInMs: last ? null : delay });
    } catch (err) {
      if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
      const reason = err.cause?.message ?? err.message;
      await giveUpWebhookDelivery({ tenantId: input.tenantId, deliveryId: input.deliveryId, series: input.series, reason });
      return { status: 'failed', attempts: number };
    }
    if (result !== 'retry') return { status: result, attempts: number };
    await sleep(delay);
  }
}
