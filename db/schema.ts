import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** Timestamps are written by Postgres (`now()`) and read back as Date objects. */
type CreatedAt = ColumnType<Date, never, never>;
type UpdatedAt = ColumnType<Date, never, Date>;

export interface TenantsTable {
  id: string;
  name: string;
  created_at: CreatedAt;
}

export type ApiKeyKind = 'management' | 'standard';

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  kind: ApiKeyKind;
  name: string | null;
  /** sha256 of the whole key, hex; the key itself is shown once and never stored. */
  key_hash: string;
  /** The first characters of the key, so a person can tell keys apart in a list. */
  key_prefix: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
}

export interface AgentsTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type AgentVersionStatus = 'published' | 'draft' | 'archived';

export interface AgentVersionsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  version: number;
  status: AgentVersionStatus;
  graph: ColumnType<AgentGraph, string, string>;
  created_at: CreatedAt;
}

/** The graph of an agent version. Only `nodes[].id` and `nodes[].toolRefs` are fixed; the rest is open. */
export interface AgentGraph {
  nodes: Array<{ id: string; toolRefs: string[]; [field: string]: unknown }>;
  [field: string]: unknown;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  // Kysely's migration bookkeeping is left out on purpose: only the Migrator touches it.
}

export type Agent = Selectable<AgentsTable>;
export type AgentVersion = Selectable<AgentVersionsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type Tenant = Selectable<TenantsTable>;
export type { Generated };
