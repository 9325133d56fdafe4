import { DEFAULT_WEBHOOK_BACKOFF, type WebhookBackoff } from '../../workflows/deliver-webhook-api.js';

/**
 * The back-off deliveries started now get: the default (5 s doubling to 2 h, for 24 h) unless
 * WEBHOOK_RETRY_INITIAL_MS / WEBHOOK_RETRY_MAX_MS / WEBHOOK_RETRY_WINDOW_MS say otherwise (tests
 * shorten it). It travels in the workflow's input, so a change applies to new deliveries only.
 */
export function webhookBackoffFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookBackoff {
  const read = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return env[name] && Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {
    initialMs: read('WEBHOOK_RETRY_INITIAL_MS', DEFAULT_WEBHOOK_BACKOFF.initialMs),
    maxMs: read('WEBHOOK_RETRY_MAX_MS', DEFAULT_WEBHOOK_BACKOFF.maxMs),
    windowMs: read('WEBHOOK_RETRY_WINDOW_MS', DEFAULT_WEBHOOK_BACKOFF.windowMs),
  };
}
