import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createChildTable, createTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Outbound webhooks (docs/webhooks.md): subscriptions, the events they were sent (the signed body, stored
 * once so every attempt and redelivery sends the same bytes), one delivery per event and subscription
 * (unique, so a retried emission makes none twice), and every attempt of every delivery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTenantTable(db, 'webhooks')
    .addColumn('url', 'text', notNull)
    .addColumn('events', 'jsonb', notNull)
    .addColumn('description', 'text')
    // Sealed with SECRETS_KEY (activities/secrets/secret-box.ts); shown once, when set.
    .addColumn('secret', 'text', notNull)
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('webhooks_tenant_idx').on('webhooks').columns(['tenant_id', 'id']).execute();

  await createTenantTable(db, 'webhook_events')
    .addColumn('type', 'text', notNull)
    // What made the event (`run:<id>:end`): a retried emission finds the event it already stored.
    .addColumn('dedupe_key', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addUniqueConstraint('webhook_events_dedupe_key', ['tenant_id', 'dedupe_key'])
    .execute();

  await createChildTable(db, 'webhook_deliveries', 'webhook_id', 'webhooks')
    .addColumn('event_id', 'text', ownedBy('webhook_events'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    // Each manual redelivery starts a new series of attempts (and a workflow of its own).
    .addColumn('series', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .$call(timestamps)
    .addUniqueConstraint('webhook_deliveries_webhook_event_key', ['webhook_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').columns(['event_id']).execute();

  await createChildTable(db, 'webhook_attempts', 'delivery_id', 'webhook_deliveries')
    .addColumn('series', 'integer', notNull)
    .addColumn('number', 'integer', notNull)
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('delivered', 'failed', 'refused', 'timeout')`))
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', notNull)
    .addColumn('attempted_at', 'timestamptz', notNull)
    .addUniqueConstraint('webhook_attempts_number_key', ['delivery_id', 'series', 'number'])
    .execute();

  await enableTenantIsolation(db, 'webhooks', 'webhook_events', 'webhook_deliveries', 'webhook_attempts');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhooks');
}
