import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Channel, ChannelKind } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `channels` table: inbound addresses that start runs of an agent (docs/channels.md). The signing
 * secret arrives here already sealed (activities/secrets/secret-box.ts); this module only stores it.
 */

/** A new channel's id, made before its secret is sealed: the secret is sealed for its row (secretContext). */
export function newChannelId(): string {
  return newId('chn');
}

/** Where a channel's sealed secret belongs: its JWE names this, and opens nowhere else. */
export function channelSecretContext(tenantId: string, channelId: string): string {
  return `channels/${tenantId}/${channelId}/secret`;
}

export interface NewChannel {
  id: string;
  agentId: string;
  kind: ChannelKind;
  description: string | null;
  sealedSecret: string;
}

export async function insertChannel(tx: TenantTx, tenantId: string, channel: NewChannel): Promise<Channel> {
  return tx
    .insertInto('channels')
    .values({ id: channel.id, tenant_id: tenantId, agent_id: channel.agentId, kind: channel.kind, description: channel.description, secret: channel.sealedSecret })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findChannel(reader: TenantScoped, tenantId: string, channelId: string): Promise<Channel | undefined> {
  return reader.selectFrom('channels').selectAll().where('id', '=', channelId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/**
 * The workspace of a channel, read past row-level security: an inbound message carries no credential,
 * only the channel's id and a signature that its workspace's secret checks.
 */
export async function findChannelTenant(db: Db, channelId: string): Promise<string | undefined> {
  const row = await db.selectFrom('channels').select('tenant_id').where('id', '=', channelId).executeTakeFirst();
  return row?.tenant_id;
}

/** A page of the workspace's channels (of one agent when given), oldest first. */
const channelsPage = preparedPage('id', (db, { tenantId, agentId }: { tenantId: string; agentId: string | undefined }) => {
  const q = db.selectFrom('channels').selectAll().where('tenant_id', '=', tenantId);
  return agentId === undefined ? q : q.where('agent_id', '=', agentId);
});

export async function listChannelsPage(reader: TenantScoped, tenantId: string, filter: { agentId?: string }, query: PageQuery): Promise<Page<Channel>> {
  return channelsPage(reader, { tenantId, agentId: filter.agentId || undefined }, query);
}

export async function updateChannel(tx: TenantTx, tenantId: string, channelId: string, changes: { agentId?: string; description?: string | null }): Promise<Channel> {
  return tx
    .updateTable('channels')
    .set({
      ...(changes.agentId !== undefined && { agent_id: changes.agentId }),
      ...(changes.description !== undefined && { description: changes.description }),
      updated_at: new Date(),
    })
    .where('id', '=', channelId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function replaceChannelSecret(tx: TenantTx, tenantId: string, channelId: string, sealedSecret: string): Promise<Channel> {
  const now = new Date();
  return tx
    .updateTable('channels')
    .set({ secret: sealedSecret, secret_rotated_at: now, updated_at: now })
    .where('id', '=', channelId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteChannelById(tx: TenantTx, tenantId: string, channelId: string): Promise<void> {
  await tx.deleteFrom('channels').where('id', '=', channelId).where('tenant_id', '=', tenantId).execute();
}
