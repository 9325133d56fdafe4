import { DEFAULT_WEBHOOK_BACKOFF, type WebhookBackoff } from '../../workflows/deliver-webhook-api.js';
import { integerSetting } from '../../db/integer-settings.js';

/**
 * The back-off deliveries started now get: the default (5 s doubling to 2 h, for 24 h) unless
 * WEBHOOK_RETRY_INITIAL_MS / WEBHOOK_RETRY_MAX_MS / WEBHOOK_RETRY_WINDOW_MS say otherwise (tests
 * shorten it). It travels in the workflow's input, so a change applies to new deliveries only.
 */
export function webhookBackoffFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookBackoff {
  return {
    initialMs: integerSetting('WEBHOOK_RETRY_INITIAL_MS', env) ?? DEFAULT_WEBHOOK_BACKOFF.initialMs,
    maxMs: integerSetting('WEBHOOK_RETRY_MAX_MS', env) ?? DEFAULT_WEBHOOK_BACKOFF.maxMs,
    windowMs: integerSetting('WEBHOOK_RETRY_WINDOW_MS', env) ?? DEFAULT_WEBHOOK_BACKOFF.windowMs,
  };
}
