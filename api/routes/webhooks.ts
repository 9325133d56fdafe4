import { startDeliveries } from '../../activities/webhooks/emit.js';
import { PING_EVENT_TYPE, WEBHOOK_EVENT_TYPES, webhookPayload } from '../../activities/webhooks/events.js';
import { newSigningSecret } from '../../activities/standard-webhooks/secret.js';
import { webhookSecretContext } from '../../activities/webhooks/secret.js';
import { isDeliveryStalled } from '../../activities/webhooks/stalled.js';
import { webhookUrlProblem } from '../../activities/webhooks/url-check.js';
import { sealSecret } from '../../activities/secrets/secret-box.js';
import { outboundPolicyFromEnv } from '../../activities/tools/outbound-policy.js';
import { newId } from '../../db/ids.js';
import type { PageQuery } from '../../db/page.js';
import type { Webhook, WebhookAttempt } from '../../db/schema.js';
import type { TenantScoped } from '../../db/tenant-transaction.js';
import {
  beginRedelivery,
  findDelivery,
  insertDeliveries,
  listAttempts,
  listDeliveriesPage,
  storeWebhookEvent,
  type DeliveryRow,
} from '../../db/webhook-deliveries.js';
import {
  deleteWebhookById,
  findWebhook,
  hasRoomForWebhook,
  insertWebhook,
  listWebhooksPage,
  newWebhookId,
  updateWebhook as updateWebhookRow,
  WEBHOOKS_PER_TENANT,
  type WebhookChanges,
} from '../../db/webhooks.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { defineListOperation } from '../list-operation.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { checkSigningSecret, signingSecretSchema } from '../signing-secret.js';
import { sealingOr503 } from '../unavailable-secrets.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, listOf, nullableTimestamp, pageQuery, pathParams, timestamp } from '../schemas.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Channels';

const idParams = pathParams(['id'], 200);
const deliveryParams = pathParams(['id', 'delivery_id'], 200);
const webhookOr404 = refOr404(findWebhook, 'webhook');

const urlSchema: JsonSchema = {
  type: 'string',
  minLength: 8,
  maxLength: 2000,
  pattern: '^https?://',
  description:
    'Where events are POSTed. Private, loopback and metadata addresses are refused (here and again at every attempt), as for HTTP tools, ' +
    'unless the operator allows them (TOOL_HTTP_ALLOW_HOSTS). No credentials or fragment.',
};
const eventsSchema: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  items: { enum: [...WEBHOOK_EVENT_TYPES] },
  description: 'The events to send (docs/webhooks.md).',
};
const descriptionSchema: JsonSchema = { type: ['string', 'null'], maxLength: 1000 };

const webhookSchema = closedObject({
  id: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] } },
  description: { type: ['string', 'null'] },
  enabled: { type: 'boolean' },
  disabled_reason: { type: ['string', 'null'], description: 'Why the platform disabled it (an endpoint that answered 410 Gone); null otherwise.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const webhookWithSecret = closedObject({
  webhook: webhookSchema,
  secret: { type: 'string', description: 'The signing secret: shown this once, stored encrypted.' },
});

const attemptSchema = closedObject({
  series: { type: 'integer', description: '1 for the first series, one more for each redelivery.' },
  number: { type: 'integer', description: 'The attempt within its series, from 1.' },
  outcome: { enum: ['delivered', 'failed', 'refused', 'timeout'], description: '`refused`: the outbound guard refused the address.' },
  response_status: { type: ['integer', 'null'] },
  response_body: { type: ['string', 'null'], description: 'The first 1000 characters of the answer.' },
  error: { type: ['string', 'null'] },
  duration_ms: { type: 'integer' },
  attempted_at: timestamp,
});
const deliveryProperties: Record<string, JsonSchema> = {
  id: { type: 'string' },
  webhook_id: { type: 'string' },
  event_id: { type: 'string', description: 'The `webhook-id` header: the same on every attempt and redelivery of the event.' },
  event_type: { type: 'string' },
  status: { enum: ['pending', 'delivered', 'failed'] },
  series: { type: 'integer' },
  attempt_count: { type: 'integer' },
  last_attempt_at: nullableTimestamp,
  next_attempt_at: { ...nullableTimestamp, description: 'When the next attempt is due while pending.' },
  delivered_at: nullableTimestamp,
  created_at: timestamp,
  updated_at: timestamp,
  attempts: { type: 'array', items: attemptSchema, description: 'Every attempt, oldest first.' },
};
const deliverySchema = closedObject(deliveryProperties);
const deliveryDetailSchema = closedObject({
  ...deliveryProperties,
  payload: closedObject({ type: { type: 'string' }, timestamp, data: { type: 'object' } }, { optional: [] }),
});
const deliveryBody = closedObject({ delivery: deliverySchema });

function webhookJson(row: Webhook) {
  return { ...pick(row, ['id', 'url', 'events', 'description', 'enabled', 'disabled_reason']), ...timestampsJson(row) };
}

function attemptJson(row: WebhookAttempt) {
  return { ...pick(row, ['series', 'number', 'outcome', 'response_status', 'response_body', 'error', 'duration_ms']), attempted_at: isoTimestamp(row.attempted_at) };
}

function deliveryJson(row: DeliveryRow, attempts: WebhookAttempt[]) {
  return {
    ...pick(row, ['id', 'webhook_id', 'event_id', 'event_type', 'status', 'series', 'attempt_count']),
    last_attempt_at: isoTimestampOrNull(row.last_attempt_at),
    next_attempt_at: isoTimestampOrNull(row.next_attempt_at),
    delivered_at: isoTimestampOrNull(row.delivered_at),
    ...timestampsJson(row),
    attempts: attempts.filter((a) => a.delivery_id === row.id).map(attemptJson),
  };
}

async function deliveryWithAttempts(reader: TenantScoped, tenantId: string, webhookId: string, deliveryId: string) {
  const row = await findDelivery(reader, tenantId, webhookId, deliveryId);
  if (!row) throw notFound('delivery', deliveryId);
  return { row, json: deliveryJson(row, await listAttempts(reader, tenantId, [row.id])) };
}

/** The URL's problem under the outbound guard's policy, as a 400 naming the field. */
async function checkUrl(url: string): Promise<void> {
  const problem = await webhookUrlProblem(url, outboundPolicyFromEnv(process.env));
  if (problem) throw invalidRequest(`url ${problem}`, [{ field: 'body.url', message: problem }]);
}

function sealed(tenantId: string, webhookId: string, secret: string): Promise<string> {
  return sealingOr503('webhook secrets', () => sealSecret(secret, webhookSecretContext(tenantId, webhookId)));
}

export const listWebhooks = defineListOperation({
  operationId: 'listWebhooks',
  path: '/v1/webhooks',
  tag: TAG,
  summary: "The workspace's outbound webhook subscriptions, oldest first",
  plural: 'webhooks',
  pageDescription: 'A page of webhook subscriptions',
  itemSchema: webhookSchema,
  page: listWebhooksPage,
  toJson: webhookJson,
});

interface CreateWebhookBody {
  url: string;
  events: string[];
  description?: string | null;
  secret?: string;
}

export const createWebhook = defineOperation<Record<string, never>, unknown, CreateWebhookBody>({
  operationId: 'createWebhook',
  method: 'post',
  path: '/v1/webhooks',
  tag: TAG,
  summary: 'Subscribe a URL to platform events, delivered signed in the Standard Webhooks format',
  description:
    'Each event is POSTed as `{type, timestamp, data}` with `webhook-id`, `webhook-timestamp` and `webhook-signature` headers ' +
    '(standardwebhooks.com), retried with exponential back-off for 24 hours until a 2xx. The answer carries the signing `secret` this once. ' +
    'A URL the outbound guard refuses (a private or loopback address, a host that does not resolve) is a 400, and nothing is created. ' +
    `A workspace may have ${WEBHOOKS_PER_TENANT} subscriptions (409 beyond). Storing the secret needs SECRETS_KEY (503 without it). See docs/webhooks.md.`,
  access: 'management',
  body: closedObject({ url: urlSchema, events: eventsSchema, description: descriptionSchema, secret: signingSecretSchema }, { required: ['url', 'events'] }),
  errors: ['conflict'],
  responses: { 201: { description: 'Created; `secret` is never shown again', schema: webhookWithSecret } },
  handler: async ({ body, caller, tenant }) => {
    if (body.secret !== undefined) checkSigningSecret(body.secret);
    await checkUrl(body.url);
    const id = newWebhookId();
    const secret = body.secret ?? newSigningSecret();
    const sealedSecret = await sealed(caller.tenantId, id, secret);
    const row = await tenant(async (tx) => {
      if (!(await hasRoomForWebhook(tx, caller.tenantId))) {
        throw new ApiError('conflict', `a workspace may have ${WEBHOOKS_PER_TENANT} webhook subscriptions; delete one first`);
      }
      return insertWebhook(tx, caller.tenantId, id, { url: body.url, events: body.events, description: body.description ?? null }, sealedSecret);
    });
    return { status: 201, body: { webhook: webhookJson(row), secret } };
  },
});

export const getWebhook = defineOperation<{ id: string }>({
  operationId: 'getWebhook',
  method: 'get',
  path: '/v1/webhooks/{id}',
  tag: TAG,
  summary: 'A webhook subscription (its secret is never shown)',
  access: 'key',
  params: idParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The subscription', schema: closedObject({ webhook: webhookSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const row = await tenantReads((reader) => webhookOr404(reader, caller.tenantId, params.id));
    return { status: 200, body: { webhook: webhookJson(row) } };
  },
});

export const updateWebhook = defineOperation<{ id: string }, unknown, Omit<WebhookChanges, 'sealedSecret'>>({
  operationId: 'updateWebhook',
  method: 'patch',
  path: '/v1/webhooks/{id}',
  tag: TAG,
  summary: 'Change a webhook subscription’s URL, events or description, or turn it off and on',
  description:
    'Fields left out stay as they are. `enabled: false` stops its deliveries (pending ones end as failed at their next attempt); ' +
    '`enabled: true` turns it back on, also after the platform disabled it for a 410 Gone. A new URL is checked as on create.',
  access: 'management',
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { url: urlSchema, events: eventsSchema, description: descriptionSchema, enabled: { type: 'boolean' } },
  },
  errors: ['not_found'],
  responses: { 200: { description: 'The subscription as changed', schema: closedObject({ webhook: webhookSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    await tenant((tx) => webhookOr404(tx, caller.tenantId, params.id));
    if (body.url !== undefined) await checkUrl(body.url);
    const row = await tenant(async (tx) => (await updateWebhookRow(tx, caller.tenantId, params.id, body)) ?? webhookOr404(tx, caller.tenantId, params.id));
    return { status: 200, body: { webhook: webhookJson(row) } };
  },
});

export const rotateWebhookSecret = defineOperation<{ id: string }, unknown, { secret?: string }>({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/v1/webhooks/{id}/rotate-secret',
  tag: TAG,
  summary: 'Replace a webhook subscription’s signing secret (generated, or the one given); shown this once',
  description: 'Attempts made from now on are signed with the new secret, those of deliveries already pending included.',
  access: 'management',
  params: idParams,
  body: closedObject({ secret: signingSecretSchema }, { required: [] }),
  errors: ['not_found'],
  responses: { 200: { description: 'The subscription and its new secret', schema: webhookWithSecret } },
  handler: async ({ params, body, caller, tenant }) => {
    if (body.secret !== undefined) checkSigningSecret(body.secret);
    await tenant((tx) => webhookOr404(tx, caller.tenantId, params.id));
    const secret = body.secret ?? newSigningSecret();
    const sealedSecret = await sealed(caller.tenantId, params.id, secret);
    const row = await tenant(async (tx) => (await updateWebhookRow(tx, caller.tenantId, params.id, { sealedSecret })) ?? webhookOr404(tx, caller.tenantId, params.id));
    return { status: 200, body: { webhook: webhookJson(row), secret } };
  },
});

export const deleteWebhook = defineDeleteOperation<{ id: string }>({
  operationId: 'deleteWebhook',
  path: '/v1/webhooks/{id}',
  tag: TAG,
  summary: 'Delete a webhook subscription with its delivery log; its pending deliveries stop',
  access: 'management',
  params: idParams,
  remove: async (tx, tenantId, params) => {
    if (!(await deleteWebhookById(tx, tenantId, params.id))) throw notFound('webhook', params.id);
    return params.id;
  },
});

export const pingWebhook = defineOperation<{ id: string }>({
  operationId: 'pingWebhook',
  method: 'post',
  path: '/v1/webhooks/{id}/ping',
  tag: TAG,
  summary: 'Send a `webhook.ping` event to this subscription (a delivery like any other, in its log)',
  access: 'management',
  params: idParams,
  errors: ['not_found', 'conflict'],
  responses: { 202: { description: 'The delivery, started', schema: deliveryBody } },
  handler: async ({ params, caller, tenant, deps }) => {
    const { pending, json } = await tenant(async (tx) => {
      const webhook = await webhookOr404(tx, caller.tenantId, params.id);
      if (!webhook.enabled) throw new ApiError('conflict', 'the webhook is disabled; PATCH it with enabled: true first');
      const event = await storeWebhookEvent(tx, caller.tenantId, {
        type: PING_EVENT_TYPE,
        dedupeKey: `ping:${newId('png')}`,
        payload: () => webhookPayload(PING_EVENT_TYPE, new Date(), { webhook_id: webhook.id }),
      });
      const pending = await insertDeliveries(tx, caller.tenantId, event.id, [webhook.id]);
      return { pending, json: (await deliveryWithAttempts(tx, caller.tenantId, webhook.id, pending[0]!.id)).json };
    });
    await startDeliveries(deps.temporal, caller.tenantId, pending);
    return { status: 202, body: { delivery: json } };
  },
});

export const listWebhookDeliveries = defineOperation<{ id: string }, PageQuery>({
  operationId: 'listWebhookDeliveries',
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries',
  tag: TAG,
  summary: "A webhook subscription's delivery log, newest first, each delivery with every attempt",
  access: 'key',
  params: idParams,
  query: pageQuery,
  errors: ['not_found'],
  responses: { 200: { description: 'A page of deliveries', schema: listOf('deliveries', deliverySchema) } },
  handler: async ({ params, query, caller, tenantReads }) => {
    const body = await tenantReads(async (reader) => {
      await webhookOr404(reader, caller.tenantId, params.id);
      const { items, nextCursor } = await listDeliveriesPage(reader, caller.tenantId, params.id, query);
      const attempts = await listAttempts(reader, caller.tenantId, items.map((row) => row.id));
      return { deliveries: items.map((row) => deliveryJson(row, attempts)), next_cursor: nextCursor };
    });
    return { status: 200, body };
  },
});

export const getWebhookDelivery = defineOperation<{ id: string; delivery_id: string }>({
  operationId: 'getWebhookDelivery',
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries/{delivery_id}',
  tag: TAG,
  summary: 'One delivery: its attempts and the event body it sends',
  access: 'key',
  params: deliveryParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The delivery', schema: closedObject({ delivery: deliveryDetailSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const { row, json } = await tenantReads(async (reader) => {
      await webhookOr404(reader, caller.tenantId, params.id);
      return deliveryWithAttempts(reader, caller.tenantId, params.id, params.delivery_id);
    });
    return { status: 200, body: { delivery: { ...json, payload: JSON.parse(row.payload) as unknown } } };
  },
});

export const redeliverWebhookDelivery = defineOperation<{ id: string; delivery_id: string }>({
  operationId: 'redeliverWebhookDelivery',
  method: 'post',
  path: '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
  tag: TAG,
  summary: 'Send a delivered or failed event again: a new series of attempts, with the same `webhook-id`',
  description:
    'A delivery still pending while its attempts go on, or of a disabled subscription, is a 409. A pending delivery ' +
    'whose attempts stopped (its workflow terminated, or its next attempt more than 15 minutes overdue) may be redelivered.',
  access: 'management',
  params: deliveryParams,
  errors: ['not_found', 'conflict'],
  responses: { 202: { description: 'The delivery, pending again', schema: deliveryBody } },
  handler: async ({ params, caller, tenant, deps }) => {
    const seen = await tenant(async (tx) => {
      await webhookOr404(tx, caller.tenantId, params.id);
      return (await deliveryWithAttempts(tx, caller.tenantId, params.id, params.delivery_id)).row;
    });
    // Asked outside the transaction (a Temporal call); the update below holds only if the series is still the one judged stalled.
    const stalledSeries = seen.status === 'pending' && (await isDeliveryStalled(deps.temporal, seen)) ? seen.series : undefined;
    const { pending, json } = await tenant(async (tx) => {
      const webhook = await webhookOr404(tx, caller.tenantId, params.id);
      const { row } = await deliveryWithAttempts(tx, caller.tenantId, params.id, params.delivery_id);
      if (!webhook.enabled) throw new ApiError('conflict', 'the webhook is disabled; PATCH it with enabled: true first');
      const series = await beginRedelivery(tx, caller.tenantId, row.id, stalledSeries);
      if (series === undefined) throw new ApiError('conflict', 'the delivery is still pending: its attempts go on');
      const pending = [{ id: row.id, webhook_id: row.webhook_id, event_id: row.event_id, series }];
      return { pending, json: (await deliveryWithAttempts(tx, caller.tenantId, params.id, row.id)).json };
    });
    await startDeliveries(deps.temporal, caller.tenantId, pending);
    return { status: 202, body: { delivery: json } };
  },
});

export default [
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  pingWebhook,
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhookDelivery,
];
