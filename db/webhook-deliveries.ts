import { sql } from 'kysely';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { WebhookAttempt, WebhookAttemptOutcome, WebhookDelivery, WebhookDeliveryStatus } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `webhook_events`, `webhook_deliveries` and `webhook_attempts` tables: what was sent to which
 * subscription, and how each attempt went (docs/webhooks.md). They live and go together: an event is
 * stored for its deliveries, an attempt belongs to its delivery.
 */

export interface StoredWebhookEvent {
  id: string;
  type: string;
  payload: string;
}

/**
 * Stores the event once per `dedupeKey`: a retried emission gets the event (and payload) it stored the
 * first time. `payload` is asked for only when the event is new.
 */
export async function storeWebhookEvent(
  tx: TenantTx,
  tenantId: string,
  event: { type: string; dedupeKey: string; payload: (id: string) => string },
): Promise<StoredWebhookEvent> {
  const existing = await tx
    .selectFrom('webhook_events')
    .select(['id', 'type', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('dedupe_key', '=', event.dedupeKey)
    .executeTakeFirst();
  if (existing) return existing;
  await pruneWebhookEvents(tx, tenantId);
  const id = newId('msg');
  await tx
    .insertInto('webhook_events')
    .values({ id, tenant_id: tenantId, type: event.type, dedupe_key: event.dedupeKey, payload: event.payload(id) })
    .onConflict((oc) => oc.columns(['tenant_id', 'dedupe_key']).doNothing())
    .execute();
  return tx
    .selectFrom('webhook_events')
    .select(['id', 'type', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('dedupe_key', '=', event.dedupeKey)
    .executeTakeFirstOrThrow();
}

/** How long an event stays, with its deliveries and their attempts (24 h of retries, then a month to look back on). */
export const WEBHOOK_EVENTS_KEPT_FOR_DAYS = 30;
/** How many expired events one new event deletes: enough to keep up with any rate of new ones, few enough to stay quick. */
const PRUNED_PER_EVENT = 20;

/**
 * Deletes the workspace's oldest expired events (their deliveries and attempts go with them), on each new
 * event as channel_messages does, so the log stays bounded without a sweeper. An event with a delivery
 * still pending stays (an operator's longer retry window).
 */
async function pruneWebhookEvents(tx: TenantTx, tenantId: string): Promise<void> {
  const expired = tx
    .selectFrom('webhook_events as e')
    .select('e.id')
    .where('e.tenant_id', '=', tenantId)
    .where('e.created_at', '<', sql<Date>`now() - make_interval(days => ${WEBHOOK_EVENTS_KEPT_FOR_DAYS})`)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id').where('d.status', '=', 'pending'))),
    )
    .orderBy('e.created_at')
    .limit(PRUNED_PER_EVENT);
  await tx.deleteFrom('webhook_events').where('tenant_id', '=', tenantId).where('id', 'in', expired).execute();
}

export interface PendingDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  series: number;
}

/** One delivery of the event to each subscription that has none yet; answers the event's deliveries still pending. */
export async function insertDeliveries(tx: TenantTx, tenantId: string, eventId: string, webhookIds: string[]): Promise<PendingDelivery[]> {
  if (webhookIds.length > 0) {
    await tx
      .insertInto('webhook_deliveries')
      .values(webhookIds.map((webhookId) => ({ id: newId('dlv'), tenant_id: tenantId, webhook_id: webhookId, event_id: eventId, status: 'pending' as const })))
      .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
      .execute();
  }
  return tx
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'event_id', 'series'])
    .where('tenant_id', '=', tenantId)
    .where('event_id', '=', eventId)
    .where('status', '=', 'pending')
    .orderBy('id')
    .execute();
}

/** Everything one attempt needs: the delivery, its subscription's address and sealed secret, and the event's body. */
export interface DeliveryTarget {
  id: string;
  webhook_id: string;
  event_id: string;
  status: WebhookDeliveryStatus;
  series: number;
  attempt_count: number;
  url: string;
  secret: string;
  enabled: boolean;
  payload: string;
}

export async function findDeliveryTarget(tx: TenantTx, tenantId: string, deliveryId: string): Promise<DeliveryTarget | undefined> {
  return tx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.webhook_id', 'd.event_id', 'd.status', 'd.series', 'd.attempt_count', 'w.url', 'w.secret', 'w.enabled', 'e.payload'])
    .where('d.tenant_id', '=', tenantId)
    .where('d.id', '=', deliveryId)
    .forUpdate('d')
    .executeTakeFirst();
}

export interface AttemptRecord {
  deliveryId: string;
  series: number;
  number: number;
  outcome: WebhookAttemptOutcome;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
}

/** Records an attempt; a retried attempt activity (a worker that died mid-request) replaces its own record. */
export async function recordAttempt(tx: TenantTx, tenantId: string, attempt: AttemptRecord): Promise<void> {
  const values = {
    outcome: attempt.outcome,
    response_status: attempt.responseStatus,
    response_body: attempt.responseBody,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    attempted_at: attempt.attemptedAt,
  };
  await tx
    .insertInto('webhook_attempts')
    .values({ id: newId('att'), tenant_id: tenantId, delivery_id: attempt.deliveryId, series: attempt.series, number: attempt.number, ...values })
    .onConflict((oc) => oc.columns(['delivery_id', 'series', 'number']).doUpdateSet(values))
    .execute();
}

export async function setDeliveryState(
  tx: TenantTx,
  tenantId: string,
  deliveryId: string,
  state: { status: WebhookDeliveryStatus; lastAttemptAt?: Date; nextAttemptAt: Date | null; delivered?: boolean },
): Promise<void> {
  await tx
    .updateTable('webhook_deliveries')
    .set({
      status: state.status,
      next_attempt_at: state.nextAttemptAt,
      // Counted from the log: an attempt activity retried after a dead worker replaces its record and counts once.
      ...(state.lastAttemptAt && {
        last_attempt_at: state.lastAttemptAt,
        attempt_count: sql<number>`(select count(*)::int from webhook_attempts a where a.delivery_id = ${deliveryId} and a.tenant_id = ${tenantId})`,
      }),
      ...(state.delivered && { delivered_at: state.lastAttemptAt ?? new Date() }),
      updated_at: new Date(),
    })
    .where('id', '=', deliveryId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

export type DeliveryRow = WebhookDelivery & { event_type: string };

function deliveries(reader: TenantScoped, tenantId: string, webhookId: string) {
  return reader
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.tenant_id', '=', tenantId)
    .where('d.webhook_id', '=', webhookId);
}

const deliveriesPage = preparedPage('d.id', (db, values: { tenantId: string; webhookId: string }) => deliveries(db, values.tenantId, values.webhookId), 'desc');

/** A page of a subscription's deliveries, newest first (the cursor is the last delivery id of the page before). */
export async function listDeliveriesPage(reader: TenantScoped, tenantId: string, webhookId: string, pageQuery: PageQuery): Promise<Page<DeliveryRow>> {
  return deliveriesPage(reader, { tenantId, webhookId }, pageQuery);
}

export async function findDelivery(reader: TenantScoped, tenantId: string, webhookId: string, deliveryId: string): Promise<(DeliveryRow & { payload: string }) | undefined> {
  return deliveries(reader, tenantId, webhookId).select('e.payload').where('d.id', '=', deliveryId).executeTakeFirst();
}

/** The attempts of these deliveries, in the order they were made. */
export async function listAttempts(reader: TenantScoped, tenantId: string, deliveryIds: string[]): Promise<WebhookAttempt[]> {
  if (deliveryIds.length === 0) return [];
  return reader
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('series')
    .orderBy('number')
    .execute();
}

/**
 * A new series of attempts for a delivery that is not pending, or whose series `stalledSeries` is pending
 * with no workflow making its attempts any more: answers the series, or undefined while attempts are
 * still being made.
 */
export async function beginRedelivery(tx: TenantTx, tenantId: string, deliveryId: string, stalledSeries?: number): Promise<number | undefined> {
  const row = await tx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', series: sql<number>`series + 1`, next_attempt_at: null, updated_at: new Date() })
    .where('id', '=', deliveryId)
    .where('tenant_id', '=', tenantId)
    .where((eb) => (stalledSeries === undefined ? eb('status', '!=', 'pending') : eb.or([eb('status', '!=', 'pending'), eb('series', '=', stalledSeries)])))
    .returning('series')
    .executeTakeFirst();
  return row?.series;
}

/** Ends a delivery's series as failed when its workflow cannot go on; a later series (a redelivery) or an ended delivery is left alone. */
export async function failDeliverySeries(tx: TenantTx, tenantId: string, deliveryId: string, series: number): Promise<boolean> {
  const updated = await tx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, updated_at: new Date() })
    .where('id', '=', deliveryId)
    .where('tenant_id', '=', tenantId)
    .where('series', '=', series)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}
