import { sql } from 'kysely';
import type { TenantTx } from './tenant-transaction.js';

/**
 * The `channel_messages` table: the message ids (`webhook-id`) a channel has taken, so a replayed or
 * redelivered message starts nothing and answers what the first one did. The timestamp check does not
 * bound replays: a Standard Webhooks sender retries one id with a fresh timestamp and signature, for
 * hours or days, so an id is kept as long as senders retry.
 */

/** How long a message id is kept: 3 days, longer than Standard Webhooks senders retry (Svix's schedule spans about a day). */
export const KEPT_FOR_SECONDS = 3 * 24 * 60 * 60;

export interface TakenMessage {
  runId: string | null;
  callId: string | null;
}

/**
 * Takes `messageId` for the channel, under a lock on that id held to the end of the transaction so two
 * deliveries of one message go one after the other: undefined when it is new (record it with
 * `recordChannelMessage` in the same transaction), or what the first delivery recorded.
 */
export async function takeChannelMessage(tx: TenantTx, channelId: string, messageId: string): Promise<TakenMessage | undefined> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`channel_messages:${channelId}:${messageId}`}, 0))`.execute(tx);
  const row = await tx
    .selectFrom('channel_messages')
    .select(['run_id', 'call_id'])
    .where('channel_id', '=', channelId)
    .where('message_id', '=', messageId)
    .where('received_at', '>=', keptSince())
    .executeTakeFirst();
  return row && { runId: row.run_id, callId: row.call_id };
}

/** Records a new message id, and forgets the channel's expired ones (a range of its received_at index). */
export async function recordChannelMessage(tx: TenantTx, tenantId: string, channelId: string, messageId: string, taken: TakenMessage): Promise<void> {
  await tx
    .deleteFrom('channel_messages')
    .where('channel_id', '=', channelId)
    .where('received_at', '<', keptSince())
    .execute();
  await tx.insertInto('channel_messages').values({ channel_id: channelId, message_id: messageId, tenant_id: tenantId, run_id: taken.runId, call_id: taken.callId }).execute();
}

/** An id taken before this is forgotten, whether or not a later insert has pruned it yet. */
function keptSince() {
  return sql<Date>`now() - make_interval(secs => ${KEPT_FOR_SECONDS})`;
}
