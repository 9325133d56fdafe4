import { sql } from 'kysely';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Webhook } from './schema.js';
import { tenantStatement } from './tenant-statement.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `webhooks` table: outbound webhook subscriptions (docs/webhooks.md). */

export interface WebhookDefinition {
  url: string;
  events: string[];
  description: string | null;
}

/** The most subscriptions a workspace may have: each event fans out to every one of them. */
export const WEBHOOKS_PER_TENANT = 50;

export function newWebhookId(): string {
  return newId('wh');
}

/** Whether the workspace is below WEBHOOKS_PER_TENANT, counted under a per-workspace lock held to the end of the transaction. */
export async function hasRoomForWebhook(tx: TenantTx, tenantId: string): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${tenantId}`}, 0))`.execute(tx);
  const { count } = await tx.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('count')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow();
  return Number(count) < WEBHOOKS_PER_TENANT;
}

export async function insertWebhook(tx: TenantTx, tenantId: string, id: string, definition: WebhookDefinition, sealedSecret: string): Promise<Webhook> {
  return tx
    .insertInto('webhooks')
    .values({ id, tenant_id: tenantId, url: definition.url, events: JSON.stringify(definition.events), description: definition.description, secret: sealedSecret })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findWebhook(reader: TenantScoped, tenantId: string, id: string): Promise<Webhook | undefined> {
  return reader.selectFrom('webhooks').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
}

const webhooksPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId));

export async function listWebhooksPage(reader: TenantScoped, tenantId: string, query: PageQuery): Promise<Page<Webhook>> {
  return webhooksPage(reader, { tenantId }, query);
}

/**
 * The enabled subscriptions to `type`: the one query an event costs a workspace that has none, so it
 * reads only ids.
 */
export async function listSubscribedWebhookIds(tx: TenantTx, tenantId: string, type: string): Promise<string[]> {
  const rows = await subscribedWebhooks(tx, tenantId, type).execute();
  return rows.map((row) => row.id);
}

/** Whether the workspace has any enabled subscription to `type`, in one round trip (db/tenant-statement.ts): what most events cost. */
export async function hasSubscribedWebhook(db: Db, tenantId: string, type: string): Promise<boolean> {
  const rows = await tenantStatement(db, tenantId, (scope) => subscribedWebhooks(scope, tenantId, type).limit(1).compile());
  return rows.length > 0;
}

function subscribedWebhooks(scope: TenantScoped, tenantId: string, type: string) {
  return scope
    .selectFrom('webhooks')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('enabled', '=', true)
    .where(sql<boolean>`events @> ${JSON.stringify([type])}::jsonb`);
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  sealedSecret?: string;
}

export async function updateWebhook(tx: TenantTx, tenantId: string, id: string, changes: WebhookChanges): Promise<Webhook | undefined> {
  return tx
    .updateTable('webhooks')
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.events !== undefined && { events: JSON.stringify(changes.events) }),
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.enabled !== undefined && { enabled: changes.enabled, disabled_reason: null }),
      ...(changes.sealedSecret !== undefined && { secret: changes.sealedSecret }),
      updated_at: new Date(),
    })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirst();
}

/** Turned off by the platform (the endpoint answered 410 Gone), with why. */
export async function disableWebhook(tx: TenantTx, tenantId: string, id: string, reason: string): Promise<void> {
  await tx.updateTable('webhooks').set({ enabled: false, disabled_reason: reason, updated_at: new Date() }).where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}

/** Deletes the subscription with its deliveries and their attempts; answers whether there was one. */
export async function deleteWebhookById(tx: TenantTx, tenantId: string, id: string): Promise<boolean> {
  const deleted = await tx.deleteFrom('webhooks').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}
