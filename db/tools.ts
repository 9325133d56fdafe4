import { newId } from './ids.js';
import { fetchPage, type Page, type PageQuery } from './page.js';
import { findAllByRef } from './refs.js';
import type { Tool, ToolKind } from './schema.js';
import type { TenantTx } from './tenant-transaction.js';

/** The `tools` table: the workspace's tool catalog. */

export interface ToolDefinition {
  kind: ToolKind;
  description: string | null;
  builtin: string | null;
  http: object | null;
  mcp: object | null;
}

export async function listToolsPage(tx: TenantTx, tenantId: string, pageQuery: PageQuery): Promise<Page<Tool>> {
  return fetchPage(tx.selectFrom('tools').selectAll().where('tenant_id', '=', tenantId), 'id', pageQuery);
}

/**
 * Creates the tool, or replaces the definition of the one with this name. The insert gives way on the
 * name's unique key, so concurrent saves of a new name create it once and the others replace it.
 */
export async function saveTool(tx: TenantTx, tenantId: string, name: string, definition: ToolDefinition): Promise<{ tool: Tool; created: boolean }> {
  const values = {
    ...definition,
    http: definition.http ? JSON.stringify(definition.http) : null,
    mcp: definition.mcp ? JSON.stringify(definition.mcp) : null,
  };
  const inserted = await tx
    .insertInto('tools')
    .values({ id: newId('tool'), tenant_id: tenantId, name, ...values })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { tool: inserted, created: true };
  const tool = await tx
    .updateTable('tools')
    .set({ ...values, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { tool, created: false };
}

/** The tools a graph's refs name (by id, else by name: db/refs.ts); refs that name no tool are absent. */
export async function findToolsByRef(tx: TenantTx, tenantId: string, refs: readonly string[]): Promise<Map<string, Tool>> {
  return findAllByRef(tx.selectFrom('tools').selectAll(), 'tools', tenantId, refs);
}

/** An HTTP or MCP tool's connection settings, read when it is called: its headers may hold secrets. */
export async function findToolConnection(tx: TenantTx, tenantId: string, toolId: string): Promise<Pick<Tool, 'http' | 'mcp'> | undefined> {
  return tx.selectFrom('tools').select(['http', 'mcp']).where('id', '=', toolId).where('tenant_id', '=', tenantId).executeTakeFirst();
}
