import { sql, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createAgentTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * Inbound channels (docs/channels.md): an address that starts runs of an agent from signed messages
 * (`webhook`) or from a call's transcribed turns (`voice`). The signing secret is stored sealed (JWE,
 * activities/secrets/secret-box.ts). Message ids are kept per channel to refuse replays; a sender's
 * thread per channel so the same sender continues one conversation. Voice calls keep their caller
 * turns; the agent's turns are the outputs of the runs those turns made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createAgentTable(db, 'channels')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('webhook', 'voice')`))
    .addColumn('description', 'text')
    .addColumn('secret', 'text', notNull)
    .addColumn('secret_rotated_at', 'timestamptz', defaultNow)
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('channels_tenant_idx').on('channels').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('channel_messages')
    .addColumn('channel_id', 'text', ownedBy('channels'))
    .addColumn('message_id', 'text', notNull)
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('run_id', 'text')
    .addColumn('call_id', 'text')
    .addColumn('received_at', 'timestamptz', defaultNow)
    .addPrimaryKeyConstraint('channel_messages_pkey', ['channel_id', 'message_id'])
    .execute();
  await db.schema.createIndex('channel_messages_received_idx').on('channel_messages').columns(['channel_id', 'received_at']).execute();

  await db.schema
    .createTable('channel_senders')
    .addColumn('channel_id', 'text', ownedBy('channels'))
    .addColumn('sender', 'text', notNull)
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('thread_id', 'text', ownedBy('threads'))
    .addPrimaryKeyConstraint('channel_senders_pkey', ['channel_id', 'sender'])
    .execute();

  // No foreign key to the channel: a deleted channel leaves its call history readable.
  await createAgentTable(db, 'voice_calls')
    .addColumn('channel_id', 'text', notNull)
    .addColumn('provider_call_id', 'text', notNull)
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('inbound', 'outbound')`))
    .addColumn('from_number', 'text', notNull)
    .addColumn('to_number', 'text', notNull)
    .addColumn('thread_id', 'text', (c) => c.references('threads.id').onDelete('set null'))
    .addColumn('started_at', 'timestamptz', defaultNow)
    .addColumn('ended_at', 'timestamptz')
    .addColumn('duration_seconds', 'integer')
    .$call(timestamps)
    .addUniqueConstraint('voice_calls_channel_call_key', ['channel_id', 'provider_call_id'])
    .execute();
  await db.schema.createIndex('voice_calls_tenant_idx').on('voice_calls').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('voice_calls_tenant_agent_idx').on('voice_calls').columns(['tenant_id', 'agent_id', 'id']).execute();

  await db.schema
    .createTable('voice_call_turns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', notNull)
    .addColumn('call_id', 'text', ownedBy('voice_calls'))
    .addColumn('text', 'text', notNull)
    .addColumn('confidence', 'double precision')
    .addColumn('run_id', 'text')
    .addColumn('created_at', 'timestamptz', defaultNow)
    .execute();
  await db.schema.createIndex('voice_call_turns_call_idx').on('voice_call_turns').columns(['call_id', 'id']).execute();

  // No foreign key: a deleted channel leaves its runs readable.
  await db.schema.alterTable('runs').addColumn('channel_id', 'text').execute();
  await db.schema.createIndex('runs_channel_idx').on('runs').columns(['channel_id', 'id']).where(sql.ref('channel_id'), 'is not', null).execute();

  await enableTenantIsolation(db, 'channels', 'channel_messages', 'channel_senders', 'voice_calls', 'voice_call_turns');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_channel_idx').execute();
  await db.schema.alterTable('runs').dropColumn('channel_id').execute();
  await dropTables(db, 'voice_call_turns', 'voice_calls', 'channel_senders', 'channel_messages', 'channels');
}
