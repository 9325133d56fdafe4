import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { insertDeliveries, storeWebhookEvent, type PendingDelivery } from '../../db/webhook-deliveries.js';
import { hasSubscribedWebhook, listSubscribedWebhookIds } from '../../db/webhooks.js';
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js';
import {
  DELIVER_WEBHOOK_TASK_QUEUE,
  DELIVER_WEBHOOK_WORKFLOW_TYPE,
  deliverWebhookWorkflowId,
  type DeliverWebhookInput,
} from '../../workflows/deliver-webhook-api.js';
import type { deliverWebhook } from '../../workflows/deliver-webhook.js';
import { webhookBackoffFromEnv } from './backoff.js';
import { webhookPayload, type WebhookEventType } from './events.js';
import { tenantFairness } from '../tenant-fairness.js';

export interface WebhookEmission {
  type: WebhookEventType;
  /** Names the event once per workspace (`run:<id>:end`): emitting it again finds what was stored. */
  dedupeKey: string;
  /** The event's `data`, read in the emission's transaction; null: this one is not sent (an eval cell's run). */
  data(tx: TenantTx): Promise<Record<string, unknown> | null>;
}

/**
 * Sends an event to the workspace's subscriptions to it, exactly once each: called after the
 * bookkeeping that made the event has committed, and again if that activity is retried. A workspace with
 * no subscription to the type pays one indexed query in one round trip (the transaction after it reads
 * the subscriptions again). The event and its deliveries are stored first (in one transaction), then each
 * pending delivery's workflow is started under its deterministic id, so a repeated emission stores
 * nothing twice and starts nothing twice.
 */
export async function emitWebhookEvent(db: Db, temporal: Client, tenantId: string, emission: WebhookEmission): Promise<void> {
  if (!(await hasSubscribedWebhook(db, tenantId, emission.type))) return;
  const pending = await withTenant(db, tenantId, async (tx) => {
    const webhookIds = await listSubscribedWebhookIds(tx, tenantId, emission.type);
    if (webhookIds.length === 0) return [];
    const data = await emission.data(tx);
    if (!data) return [];
    const event = await storeWebhookEvent(tx, tenantId, {
      type: emission.type,
      dedupeKey: emission.dedupeKey,
      payload: () => webhookPayload(emission.type, new Date(), data),
    });
    return insertDeliveries(tx, tenantId, event.id, webhookIds);
  });
  await startDeliveries(temporal, tenantId, pending);
}

/** Starts each delivery's workflow; one already running (a repeated emission) is left to go on. */
export async function startDeliveries(temporal: Client, tenantId: string, deliveries: PendingDelivery[]): Promise<void> {
  const backoff = webhookBackoffFromEnv();
  for (const delivery of deliveries) {
    const input: DeliverWebhookInput = { tenantId, deliveryId: delivery.id, series: delivery.series, backoff };
    try {
      await temporal.workflow.start<typeof deliverWebhook>(DELIVER_WEBHOOK_WORKFLOW_TYPE, {
        workflowId: deliverWebhookWorkflowId(delivery.webhook_id, delivery.event_id, delivery.series),
        taskQueue: DELIVER_WEBHOOK_TASK_QUEUE,
        args: [input],
        priority: tenantFairness(tenantId),
        // A workflow that ended without recording an end (terminated) may be started again; one that ended properly may not.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
}
