import { findTenantRow } from './find-tenant-row.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByName, findByRef } from './refs.js';
import type { Agent, AgentGraph, AgentVersion } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `agents` table and its `agent_versions`: an agent and the versions of its graph. */

/** An agent with the number of its published version (null when none is). */
export type AgentRow = Agent & { published_version: number | null };

function selectAgents(reader: TenantScoped) {
  return reader
    .selectFrom('agents')
    .selectAll('agents')
    .select((eb) =>
      eb
        .selectFrom('agent_versions')
        .select('version')
        .whereRef('agent_versions.agent_id', '=', 'agents.id')
        .where('status', '=', 'published')
        .as('published_version'),
    );
}

/** The agent `ref` names: by id, else by name (db/refs.ts). */
export async function findAgent(reader: TenantScoped, tenantId: string, ref: string): Promise<AgentRow | undefined> {
  return findByRef(selectAgents(reader), 'agents', tenantId, ref);
}

/** The agent named `name` (by name only: an upsert by name whose name is taken). */
export async function findAgentByName(tx: TenantTx, tenantId: string, name: string): Promise<AgentRow | undefined> {
  return findByName(selectAgents(tx), 'agents', tenantId, name);
}

const agentsPage = preparedPage('agents.id', (db, { tenantId }: { tenantId: string }) => selectAgents(db).where('agents.tenant_id', '=', tenantId));

export async function listAgentsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<AgentRow>> {
  return agentsPage(reader, { tenantId }, pageQuery);
}

/** Inserts the agent unless the workspace has one by this name: the new id, or undefined when the name is taken. */
export async function insertAgentIfNew(tx: TenantTx, tenantId: string, agent: { name: string; description: string | null }): Promise<string | undefined> {
  const inserted = await tx
    .insertInto('agents')
    .values({ id: newId('agt'), tenant_id: tenantId, name: agent.name, description: agent.description })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

export async function updateAgentById(tx: TenantTx, tenantId: string, agentId: string, changes: { name?: string; description?: string | null }): Promise<void> {
  await tx
    .updateTable('agents')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', agentId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** Deletes the agent; its versions go with it (on delete cascade). */
export async function deleteAgentById(tx: TenantTx, tenantId: string, agentId: string): Promise<void> {
  await tx.deleteFrom('agents').where('id', '=', agentId).where('tenant_id', '=', tenantId).execute();
}

/** `select … for update` on the agent row, held until the transaction ends. */
async function lockAgent(tx: TenantTx, tenantId: string, agentId: string): Promise<void> {
  await tx.selectFrom('agents').select('id').where('id', '=', agentId).where('tenant_id', '=', tenantId).forUpdate().execute();
}

/** Every version of the agent, newest first. */
export async function listVersionsOfAgent(reader: TenantScoped, tenantId: string, agentId: string): Promise<AgentVersion[]> {
  return reader
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('tenant_id', '=', tenantId)
    .orderBy('version', 'desc')
    .execute();
}

/** The version runs execute; undefined when nothing is published. */
export async function findPublishedVersion(tx: TenantTx, tenantId: string, agentId: string): Promise<AgentVersion | undefined> {
  return findTenantRow(tx, 'agent_versions', tenantId, { agent_id: agentId, status: 'published' });
}

/** The agent's version with this number, published or not. */
export async function findAgentVersionByNumber(tx: TenantTx, tenantId: string, agentId: string, version: number): Promise<AgentVersion | undefined> {
  return findTenantRow(tx, 'agent_versions', tenantId, { agent_id: agentId, version });
}

export async function findAgentVersion(tx: TenantTx, tenantId: string, versionId: string): Promise<AgentVersion | undefined> {
  return tx.selectFrom('agent_versions').selectAll().where('id', '=', versionId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/**
 * Adds the next version of the agent's graph, published (archiving the published one) or as a draft.
 * It locks the agent first, so concurrent additions number their versions one after another.
 */
export async function addAgentVersion(tx: TenantTx, tenantId: string, agentId: string, graph: AgentGraph, publish: boolean): Promise<AgentVersion> {
  await lockAgent(tx, tenantId, agentId);
  const last = await tx
    .selectFrom('agent_versions')
    .select((eb) => eb.fn.max('version').as('max'))
    .where('agent_id', '=', agentId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (publish) {
    await tx
      .updateTable('agent_versions')
      .set({ status: 'archived' })
      .where('agent_id', '=', agentId)
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'published')
      .execute();
  }
  return tx
    .insertInto('agent_versions')
    .values({
      id: newId('ver'),
      tenant_id: tenantId,
      agent_id: agentId,
      version: Number(last?.max ?? 0) + 1,
      status: publish ? 'published' : 'draft',
      graph: JSON.stringify(graph),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
