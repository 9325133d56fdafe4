import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { CallDirection, VoiceCall } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `voice_calls` table: calls that came through a voice channel (docs/channels.md), one per provider call id and channel. */

export interface CallParties {
  channelId: string;
  agentId: string;
  providerCallId: string;
  direction: CallDirection;
  from: string;
  to: string;
}

/** The channel's call with this provider id, made on its first event, locked to the end of the transaction. */
export async function openCall(tx: TenantTx, tenantId: string, call: CallParties): Promise<VoiceCall> {
  await tx
    .insertInto('voice_calls')
    .values({
      id: newId('call'),
      tenant_id: tenantId,
      agent_id: call.agentId,
      channel_id: call.channelId,
      provider_call_id: call.providerCallId,
      direction: call.direction,
      from_number: call.from,
      to_number: call.to,
    })
    .onConflict((oc) => oc.columns(['channel_id', 'provider_call_id']).doNothing())
    .execute();
  return tx
    .selectFrom('voice_calls')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('channel_id', '=', call.channelId)
    .where('provider_call_id', '=', call.providerCallId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function setCallThread(tx: TenantTx, tenantId: string, callId: string, threadId: string): Promise<void> {
  await tx.updateTable('voice_calls').set({ thread_id: threadId, updated_at: new Date() }).where('id', '=', callId).where('tenant_id', '=', tenantId).execute();
}

export async function endCall(tx: TenantTx, tenantId: string, callId: string, durationSeconds: number): Promise<VoiceCall> {
  const now = new Date();
  return tx
    .updateTable('voice_calls')
    .set({ ended_at: now, duration_seconds: durationSeconds, updated_at: now })
    .where('id', '=', callId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findCall(reader: TenantScoped, tenantId: string, callId: string): Promise<VoiceCall | undefined> {
  return reader.selectFrom('voice_calls').selectAll().where('id', '=', callId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export interface CallFilter {
  agentId?: string;
  /** Calls that started at or after this time. */
  startedAfter?: Date;
  /** Calls that started before this time. */
  startedBefore?: Date;
}

const callsPage = preparedPage(
  'id',
  (db, values: CallFilter & { tenantId: string }) => {
    let q = db.selectFrom('voice_calls').selectAll().where('tenant_id', '=', values.tenantId);
    if (values.agentId !== undefined) q = q.where('agent_id', '=', values.agentId);
    if (values.startedAfter !== undefined) q = q.where('started_at', '>=', values.startedAfter);
    if (values.startedBefore !== undefined) q = q.where('started_at', '<', values.startedBefore);
    return q;
  },
  'desc',
);

/** A page of the workspace's calls, most recent first (the cursor is the last call of the previous page). */
export async function listCallsPage(reader: TenantScoped, tenantId: string, filter: CallFilter, pageQuery: PageQuery): Promise<Page<VoiceCall>> {
  const { agentId, startedAfter, startedBefore } = filter;
  return callsPage(reader, { tenantId, agentId: agentId || undefined, startedAfter, startedBefore }, pageQuery);
}
