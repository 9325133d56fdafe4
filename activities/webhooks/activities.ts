import type { ActivityDeps } from '../deps.js';
import type { WebhookAttemptInput, WebhookGiveUpInput } from '../../workflows/deliver-webhook-api.js';
import { attemptWebhookDelivery } from './attempt.js';
import { giveUpWebhookDelivery } from './give-up.js';

/** The `deliverWebhook` workflow's steps (workflows/deliver-webhook-api.ts). */
export function webhookActivities({ db, outboundPolicy }: ActivityDeps) {
  return {
    attemptWebhookDelivery: (input: WebhookAttemptInput) => attemptWebhookDelivery({ db, outboundPolicy }, input),
    giveUpWebhookDelivery: (input: WebhookGiveUpInput) => giveUpWebhookDelivery(db, input),
  };
}
