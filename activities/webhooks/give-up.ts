import { log } from '@temporalio/activity';
import type { Db } from '../../db/database.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { failDeliverySeries } from '../../db/webhook-deliveries.js';
import type { WebhookGiveUpInput } from '../../workflows/deliver-webhook-api.js';

/**
 * The `deliverWebhook` workflow's last step when an attempt could not even be recorded (Postgres away
 * longer than the attempt activity retries): the delivery ends `failed`, so it can be redelivered,
 * rather than staying `pending` with no workflow behind it.
 */
export async function giveUpWebhookDelivery(db: Db, input: WebhookGiveUpInput): Promise<void> {
  const ended = await withTenant(db, input.tenantId, (tx) => failDeliverySeries(tx, input.tenantId, input.deliveryId, input.series));
  if (ended) log.warn('webhook delivery given up', { deliveryId: input.deliveryId, series: input.series, reason: input.reason });
}
