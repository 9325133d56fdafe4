import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { deliverWebhookWorkflowId } from '../../workflows/deliver-webhook-api.js';

/** How late a pending delivery's next attempt may be before it counts as stalled whatever Temporal says (workers down that long). */
export const STALLED_AFTER_MS = 15 * 60_000;

/**
 * Whether a `pending` delivery has nothing making its attempts any more: its series' workflow is not
 * running (terminated, or failed before it could record an end) or its next attempt is long overdue.
 * Such a delivery may be redelivered; the new series supersedes the old one, whose workflow (if it ever
 * wakes) finds the series changed and stops without sending.
 */
export async function isDeliveryStalled(
  temporal: Client,
  delivery: { webhook_id: string; event_id: string; series: number; next_attempt_at: Date | null },
): Promise<boolean> {
  if (delivery.next_attempt_at && Date.now() - delivery.next_attempt_at.getTime() > STALLED_AFTER_MS) return true;
  try {
    const description = await temporal.workflow.getHandle(deliverWebhookWorkflowId(delivery.webhook_id, delivery.event_id, delivery.series)).describe();
    return description.status.name !== 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true;
    throw err;
  }
}
