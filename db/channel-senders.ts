import { sql } from 'kysely';
import type { TenantTx } from './tenant-transaction.js';

/** The `channel_senders` table: the thread each sender of a channel continues. */

/**
 * The sender's thread on this channel, if it has one, under a lock on the sender held to the end of
 * the transaction, so a sender's first two messages at once do not make two threads.
 */
export async function lockSenderThread(tx: TenantTx, channelId: string, sender: string): Promise<string | undefined> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`channel_senders:${channelId}:${sender}`}, 0))`.execute(tx);
  const row = await tx.selectFrom('channel_senders').select('thread_id').where('channel_id', '=', channelId).where('sender', '=', sender).executeTakeFirst();
  return row?.thread_id;
}

export async function saveSenderThread(tx: TenantTx, tenantId: string, channelId: string, sender: string, threadId: string): Promise<void> {
  await tx
    .insertInto('channel_senders')
    .values({ channel_id: channelId, sender, tenant_id: tenantId, thread_id: threadId })
    .onConflict((oc) => oc.columns(['channel_id', 'sender']).doUpdateSet({ thread_id: threadId }))
    .execute();
}
