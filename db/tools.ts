import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findAllByRef, findByName, findByRef } from './refs.js';
import { insertByNameIfNew } from './save-by-name.js';
import type { AgentToolConfig, BrowserToolConfig, Tool, ToolKind } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `tools` table: the workspace's tool catalog. */

export interface ToolDefinition {
  kind: ToolKind;
  description: string | null;
  builtin: string | null;
  http: object | null;
  mcp: object | null;
  agent: AgentToolConfig | null;
  browser: BrowserToolConfig | null;
}

const toolsPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('tools').selectAll().where('tenant_id', '=', tenantId));

export async function listToolsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<Tool>> {
  return toolsPage(reader, { tenantId }, pageQuery);
}

/** Creates the tool unless the workspace has one by this name (then undefined, and nothing changes). */
export async function insertToolIfNew(tx: TenantTx, tenantId: string, name: string, definition: ToolDefinition): Promise<Tool | undefined> {
  return insertByNameIfNew(tx, 'tools', tenantId, name, newId('tool'), storedDefinition(definition));
}

/** The tool named `name` (by name only: a create by name whose name is taken). */
export async function findToolByName(tx: TenantTx, tenantId: string, name: string): Promise<Tool | undefined> {
  return findByName(tx.selectFrom('tools').selectAll(), 'tools', tenantId, name);
}

/** The tool `ref` names: by id, else by name (db/refs.ts). */
export async function findTool(tx: TenantTx, tenantId: string, ref: string): Promise<Tool | undefined> {
  return findByRef(tx.selectFrom('tools').selectAll(), 'tools', tenantId, ref);
}

/** Renames the tool and replaces its definition (the caller merges a partial change into the whole). */
export async function updateToolById(tx: TenantTx, tenantId: string, toolId: string, name: string, definition: ToolDefinition): Promise<Tool> {
  return tx
    .updateTable('tools')
    .set({ name, ...storedDefinition(definition), updated_at: new Date() })
    .where('id', '=', toolId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

function storedDefinition(definition: ToolDefinition) {
  return {
    ...definition,
    http: definition.http ? JSON.stringify(definition.http) : null,
    mcp: definition.mcp ? JSON.stringify(definition.mcp) : null,
    agent: definition.agent ? JSON.stringify(definition.agent) : null,
    browser: definition.browser ? JSON.stringify(definition.browser) : null,
  };
}

/** The tools a graph's refs name (by id, else by name: db/refs.ts); refs that name no tool are absent. */
export async function findToolsByRef(tx: TenantTx, tenantId: string, refs: readonly string[]): Promise<Map<string, Tool>> {
  return findAllByRef(tx.selectFrom('tools').selectAll(), 'tools', tenantId, refs);
}

/** An HTTP, MCP or browser tool's settings, read when it is called: its headers may hold secrets. */
export async function findToolConnection(tx: TenantTx, tenantId: string, toolId: string): Promise<Pick<Tool, 'http' | 'mcp' | 'browser'> | undefined> {
  return tx.selectFrom('tools').select(['http', 'mcp', 'browser']).where('id', '=', toolId).where('tenant_id', '=', tenantId).executeTakeFirst();
}
