import type { Readable } from 'node:stream';
import type { Db } from '../../db/database.js';
import type { WebhookAttemptOutcome, WebhookDeliveryStatus } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { findDeliveryTarget, recordAttempt, setDeliveryState } from '../../db/webhook-deliveries.js';
import { disableWebhook } from '../../db/webhooks.js';
import { MAX_WEBHOOK_ATTEMPT_TIMEOUT_MS, type WebhookAttemptInput, type WebhookAttemptResult } from '../../workflows/deliver-webhook-api.js';
import { openSecret, SecretsUnavailableError, SecretUnreadableError } from '../secrets/secret-box.js';
import { OutboundRefusedError } from '../tools/errors.js';
import { openGuardedRequest } from '../tools/outbound-guard.js';
import type { OutboundPolicy } from '../tools/types.js';
import { webhookSecretContext } from './secret.js';
import { webhookHeaders } from './signature.js';
import { integerSetting } from '../../db/integer-settings.js';

/** How long an endpoint has to answer one attempt (WEBHOOK_ATTEMPT_TIMEOUT_MS); Standard Webhooks senders use about this. */
const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;
/** How much of an answer the attempt log keeps. */
const RESPONSE_BODY_CHARS = 1_000;

interface AttemptDeps {
  db: Db;
  outboundPolicy: OutboundPolicy;
}

interface Exchange {
  outcome: WebhookAttemptOutcome;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * One attempt of a delivery: signs the stored body, sends it through the outbound guard (its policy
 * judged again now, on what the host resolves to now; redirects are not followed), and records how it
 * went. 2xx delivers; 410 Gone ends the delivery and disables the subscription; anything else is retried
 * until the workflow's window is spent (`nextAttemptInMs` null).
 */
export async function attemptWebhookDelivery({ db, outboundPolicy }: AttemptDeps, input: WebhookAttemptInput): Promise<WebhookAttemptResult> {
  const target = await withTenant(db, input.tenantId, (tx) => findDeliveryTarget(tx, input.tenantId, input.deliveryId));
  if (!target || target.series !== input.series || target.status !== 'pending') return 'stopped';
  if (!target.enabled) {
    await withTenant(db, input.tenantId, (tx) => setDeliveryState(tx, input.tenantId, input.deliveryId, { status: 'failed', nextAttemptAt: null }));
    return 'stopped';
  }

  const attemptedAt = new Date();
  const started = performance.now();
  const exchange = await send(target.url, target.secret, webhookSecretContext(input.tenantId, target.webhook_id), target.event_id, target.payload, attemptedAt, outboundPolicy);
  const durationMs = Math.round(performance.now() - started);

  const gone = exchange.responseStatus === 410;
  const result: WebhookAttemptResult = exchange.outcome === 'delivered' ? 'delivered' : gone || input.nextAttemptInMs === null ? 'failed' : 'retry';
  const status: WebhookDeliveryStatus = result === 'retry' ? 'pending' : result === 'delivered' ? 'delivered' : 'failed';
  await withTenant(db, input.tenantId, async (tx) => {
    // Under the delivery's lock: a delete or redelivery in between wins, and this attempt is not recorded over it.
    const current = await findDeliveryTarget(tx, input.tenantId, input.deliveryId);
    if (!current || current.series !== input.series) return;
    await recordAttempt(tx, input.tenantId, { deliveryId: input.deliveryId, series: input.series, number: input.number, ...exchange, durationMs, attemptedAt });
    await setDeliveryState(tx, input.tenantId, input.deliveryId, {
      status,
      lastAttemptAt: attemptedAt,
      nextAttemptAt: result === 'retry' ? new Date(Date.now() + input.nextAttemptInMs!) : null,
      delivered: result === 'delivered',
    });
    if (gone) await disableWebhook(tx, input.tenantId, target.webhook_id, 'the endpoint answered 410 Gone');
  });
  return result;
}

async function send(url: string, sealedSecret: string, context: string, messageId: string, body: string, at: Date, policy: OutboundPolicy): Promise<Exchange> {
  let secret: string;
  try {
    secret = await openSecret(sealedSecret, context);
  } catch (err) {
    if (err instanceof SecretsUnavailableError || err instanceof SecretUnreadableError) return failure('failed', `cannot sign: ${err.message}`);
    throw err;
  }
  const timeoutMs = attemptTimeoutMs();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await openGuardedRequest(url, {
      method: 'POST',
      headers: webhookHeaders(secret, messageId, at, body),
      body,
      policy,
      signal,
      redirect: 'manual',
      // The status decides; only the answer's start is read (readSome), so no length is too long.
      maxResponseBytes: Number.MAX_SAFE_INTEGER,
    });
    const responseBody = await readSome(response.body);
    const ok = response.status >= 200 && response.status < 300;
    const redirect = response.status >= 300 && response.status < 400;
    return {
      outcome: ok ? 'delivered' : 'failed',
      responseStatus: response.status,
      responseBody,
      error: ok ? null : redirect ? `answered ${response.status}; redirects are not followed` : `answered ${response.status}`,
    };
  } catch (err) {
    if (err instanceof OutboundRefusedError) return failure('refused', err.message);
    if (signal.aborted) return failure('timeout', `no answer within ${timeoutMs} ms`);
    return failure('failed', err instanceof Error ? err.message : String(err));
  }
}

/** WEBHOOK_ATTEMPT_TIMEOUT_MS, capped below the activity's own timeout: an attempt outliving it would be retried and sent twice. */
function attemptTimeoutMs(): number {
  return Math.min(integerSetting('WEBHOOK_ATTEMPT_TIMEOUT_MS') ?? DEFAULT_ATTEMPT_TIMEOUT_MS, MAX_WEBHOOK_ATTEMPT_TIMEOUT_MS);
}

function failure(outcome: WebhookAttemptOutcome, error: string): Exchange {
  return { outcome, responseStatus: null, responseBody: null, error };
}

/** The start of the answer, as text that Postgres can store; the rest is not read. */
async function readSome(body: Readable): Promise<string | null> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += (chunk as Buffer).toString('utf8');
      if (text.length >= RESPONSE_BODY_CHARS) break;
    }
  } catch {
    // The status is what counts; a body cut short is kept as far as it came.
  } finally {
    body.destroy();
  }
  const kept = text.slice(0, RESPONSE_BODY_CHARS).replaceAll('\u0000', '').toWellFormed();
  return kept === '' ? null : kept;
}
