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

export type ToolKind = 'builtin' | 'http' | 'mcp' | 'agent' | 'browser';

export interface ToolsTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: ToolKind;
  description: string | null;
  builtin: string | null;
  http: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  mcp: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  /** A subagent: the agent a tool of kind `agent` runs (activities/runs/subagents.ts). */
  agent: ColumnType<AgentToolConfig | null, string | null | undefined, string | null>;
  /** A tool of kind `browser`: its settings (activities/tools/browser-tool.ts). */
  browser: ColumnType<BrowserToolConfig | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface BrowserToolConfig {
  /** The id of the saved sign-in whose storage state pages of its origin open with. */
  sign_in?: string;
  max_chars?: number;
  timeout_ms?: number;
}

export interface AgentToolConfig {
  /** The agent's id or name. */
  agent: string;
  /** A pinned version; absent: the version published when the tool is called. */
  version?: number;
  /** How deep below the run a client started a subagent may run (default 3). */
  max_depth?: number;
}

export interface ThreadsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  title: string;
  /** `eval` for the thread of an eval's run, which thread lists leave out. */
  source: ColumnType<string, string | undefined, never>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type RunStatus = 'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export interface RunError {
  code: string;
  message: string;
}

export interface PendingQuestion {
  id: string;
  question: string;
  asked_at: string;
}

export interface RunsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  agent_version_id: string;
  version: number;
  thread_id: string;
  status: RunStatus;
  source: string;
  model: string | null;
  input: string;
  output: string | null;
  error: ColumnType<RunError | null, string | null, string | null>;
  pending_question: ColumnType<PendingQuestion | null, string | null, string | null>;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: string | null;
  duration_ms: number | null;
  last_event_seq: ColumnType<number, never, number>;
  /** Set on an eval's runs: the experiment and cell it ran for, and its variant's graph. */
  experiment_id: ColumnType<string | null, string | null | undefined, string | null>;
  cell_id: ColumnType<string | null, string | null | undefined, string | null>;
  graph_override: ColumnType<AgentGraph | null, string | null | undefined, string | null>;
  /** The prompt version each node used. */
  prompts: ColumnType<RunPromptUse[], never, string>;
  guardrail_trips: ColumnType<GuardrailTripRecord[], never, string>;
  /** The skill versions the run's nodes loaded (`use_skill`), in order. */
  skills: ColumnType<RunSkillUse[], never, string>;
  /** A subagent's run: the run whose tool call started it, that call's step index, and how deep it is (0: started by a client). */
  parent_run_id: ColumnType<string | null, string | null | undefined, never>;
  parent_step: ColumnType<number | null, number | null | undefined, never>;
  depth: ColumnType<number, number | undefined, never>;
  /** A scheduled run: its schedule, and the Temporal run id of the firing that made it (one run per firing). */
  schedule_id: ColumnType<string | null, string | null | undefined, never>;
  schedule_firing_id: ColumnType<string | null, string | null | undefined, never>;
  /** A run an inbound channel started (docs/channels.md). */
  channel_id: ColumnType<string | null, string | null | undefined, never>;
  /** A run a deployment's publishable key started (docs/deployments.md). */
  deployment_id: ColumnType<string | null, string | null | undefined, never>;
  created_at: CreatedAt;
  started_at: Date | null;
  ended_at: Date | null;
}

export type ChannelKind = 'webhook' | 'voice';

/** An inbound channel (db/channels.ts); `secret` is sealed (activities/secrets/secret-box.ts). */
export interface ChannelsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  kind: ChannelKind;
  description: string | null;
  secret: string;
  secret_rotated_at: ColumnType<Date, Date | undefined, Date>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A message id a channel has taken, kept to refuse its replays (db/channel-messages.ts). */
export interface ChannelMessagesTable {
  channel_id: string;
  message_id: string;
  tenant_id: string;
  run_id: string | null;
  call_id: string | null;
  received_at: ColumnType<Date, Date | undefined, never>;
}

/** The thread a channel's sender continues (db/channel-senders.ts). */
export interface ChannelSendersTable {
  channel_id: string;
  sender: string;
  tenant_id: string;
  thread_id: string;
}

export type CallDirection = 'inbound' | 'outbound';

/** A call that came through a voice channel (db/voice-calls.ts). */
export interface VoiceCallsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  channel_id: string;
  /** The telephony provider's id of the call, unique per channel. */
  provider_call_id: string;
  direction: CallDirection;
  from_number: string;
  to_number: string;
  thread_id: string | null;
  started_at: ColumnType<Date, Date | undefined, never>;
  ended_at: Date | null;
  duration_seconds: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A caller's transcribed turn of a call and the run it started (db/voice-call-turns.ts). */
export interface VoiceCallTurnsTable {
  id: string;
  tenant_id: string;
  call_id: string;
  text: string;
  confidence: number | null;
  run_id: string | null;
  created_at: CreatedAt;
}

/** An agent published under a public slug with a publishable key (db/deployments.ts, docs/deployments.md). */
export interface DeploymentsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  /** Unique across the service: the hosted chat page's address. */
  slug: string;
  title: string | null;
  /** A pinned version; null runs whatever version is published. */
  version: number | null;
  /** Origins (`https://example.com`) whose pages may call the API with the publishable key. */
  allowed_origins: ColumnType<string[], string, string>;
  runs_per_minute: number;
  runs_per_minute_per_visitor: number;
  /** `svc_pk_…`, stored as it is: it is public by design. */
  publishable_key: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A thread a publishable key started, and the SHA-256 of its visitor's token (db/deployments.ts). */
export interface DeploymentThreadsTable {
  thread_id: string;
  tenant_id: string;
  deployment_id: string;
  visitor_token_hash: string;
  created_at: CreatedAt;
}

export type ScheduleOverlap = 'skip' | 'buffer_one' | 'allow_all';

/** A schedule's definition, mirrored from its Temporal Schedule (db/schedules.ts). Exactly one of `cron` and `every` is set. */
export interface SchedulesTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  input: string;
  thread_id: string | null;
  cron: string | null;
  every: string | null;
  time_zone: string;
  overlap: ScheduleOverlap;
  jitter: string | null;
  paused: ColumnType<boolean, boolean | undefined, boolean>;
  description: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** An outbound webhook subscription (db/webhooks.ts); `secret` is sealed (activities/secrets/secret-box.ts). */
export interface WebhooksTable {
  id: string;
  tenant_id: string;
  url: string;
  events: ColumnType<string[], string, string>;
  description: string | null;
  secret: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** An event sent to webhooks: `payload` is the exact body every attempt signs and sends (db/webhook-deliveries.ts). */
export interface WebhookEventsTable {
  id: string;
  tenant_id: string;
  type: string;
  dedupe_key: string;
  payload: string;
  created_at: CreatedAt;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  status: WebhookDeliveryStatus;
  series: ColumnType<number, number | undefined, number>;
  attempt_count: ColumnType<number, number | undefined, number>;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type WebhookAttemptOutcome = 'delivered' | 'failed' | 'refused' | 'timeout';

export interface WebhookAttemptsTable {
  id: string;
  tenant_id: string;
  delivery_id: string;
  series: number;
  number: number;
  outcome: WebhookAttemptOutcome;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

export type ProviderKind = 'openai' | 'anthropic' | 'openai_compatible';

/** USD per million tokens, decimal strings (activities/models/prices.ts). */
export interface ProviderModelPrice {
  prompt: string;
  completion: string;
}

/** A workspace's model provider connection (db/provider-connections.ts); `api_key` and `headers` are JWE. */
export interface ProviderConnectionsTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: ProviderKind;
  base_url: string;
  api_key: string | null;
  api_key_last4: string | null;
  headers: string | null;
  header_names: ColumnType<string[], string, string>;
  /** By model name (the part after `provider/`), or `*` for every model of the connection. */
  prices: ColumnType<Record<string, ProviderModelPrice>, string, string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A saved sign-in for the browser tool; `storage_state` is sealed (JWE) and never leaves the server. */
export interface BrowserSignInsTable {
  id: string;
  tenant_id: string;
  name: string;
  origin: string;
  storage_state: string;
  cookie_count: number;
  cookie_domains: ColumnType<string[], string, string>;
  local_storage_count: number;
  cookies_expire_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface RunPromptUse {
  node_id: string;
  prompt_id: string;
  name: string;
  version: number;
}

export interface RunSkillUse {
  node_id: string;
  skill_id: string;
  name: string;
  version: number;
}

export interface GuardrailTripRecord {
  name: string;
  kind: string;
  action: string;
  target: 'input' | 'output';
  detail: string;
  at: string;
}

export interface PromptsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** The current version's number. */
  version: number;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PromptVersionsTable {
  id: string;
  tenant_id: string;
  prompt_id: string;
  version: number;
  template: string;
  description: string | null;
  model: string | null;
  created_at: CreatedAt;
}

export interface SkillsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** The current version's number. */
  version: number;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SkillVersionsTable {
  id: string;
  tenant_id: string;
  skill_id: string;
  version: number;
  description: string;
  instructions: string;
  /** Catalog tool ids the skill brings along. */
  tools: ColumnType<string[], string, string>;
  created_at: CreatedAt;
}

export interface GuardrailsTable {
  id: string;
  tenant_id: string;
  name: string;
  kind: string;
  target: 'input' | 'output' | 'both';
  action: 'block' | 'redact' | 'warn';
  enabled: boolean;
  description: string | null;
  config: ColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** pgvector columns are written as their text literal (`[0.1,0.2,...]`) and never read back whole. */
type VectorColumn = ColumnType<string, string, string>;

export interface MemoriesTable {
  id: string;
  tenant_id: string;
  content: string;
  embedding: VectorColumn;
  embedding_model: string;
  embedding_dtype: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface KnowledgeBasesTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  graph: ColumnType<KnowledgeGraphSettings | null, string | null, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** How a knowledge base extracts its entity-relationship graph (docs/knowledge.md). */
export interface KnowledgeGraphSettings {
  model: string;
  /** For `model: "scripted"`: what the extraction model answers, one turn per chunk. */
  script?: unknown[];
}

export type DocumentStatus = 'accepted' | 'queued' | 'converting' | 'ready' | 'failed';

export interface DocumentsTable {
  id: string;
  tenant_id: string;
  kb_id: string;
  title: string;
  filename: string | null;
  content_type: string | null;
  format: string;
  size_bytes: number;
  status: DocumentStatus;
  error: string | null;
  source: Buffer | null;
  markdown: string | null;
  chunk_count: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ChunksTable {
  id: string;
  tenant_id: string;
  kb_id: string;
  document_id: string;
  index: number;
  content: string;
  heading_path: ColumnType<string[], string, string>;
  embedding: VectorColumn;
  embedding_model: string;
  embedding_dtype: string;
  created_at: CreatedAt;
}

export interface KbEntitiesTable {
  id: string;
  tenant_id: string;
  kb_id: string;
  document_id: string;
  name: string;
  type: string | null;
  chunk_ids: ColumnType<string[], string, string>;
}

export interface KbRelationsTable {
  id: string;
  tenant_id: string;
  kb_id: string;
  document_id: string;
  source: string;
  relation: string;
  target: string;
}

export interface RunEventsTable {
  run_id: string;
  seq: number;
  tenant_id: string;
  type: string;
  data: ColumnType<Record<string, unknown>, string, never>;
  dedupe_key: string | null;
  created_at: CreatedAt;
}

export type StepStatus = 'running' | 'completed' | 'failed';

export interface RunStepsTable {
  id: string;
  tenant_id: string;
  run_id: string;
  index: number;
  node_id: string;
  tool_call_id: string;
  tool: string;
  tool_id: string | null;
  arguments: ColumnType<Record<string, unknown>, string, string>;
  status: StepStatus;
  result: ColumnType<unknown, string | null, string | null>;
  error: string | null;
  started_at: ColumnType<Date, Date | undefined, Date>;
  ended_at: Date | null;
  duration_ms: number | null;
}

export interface RunHistoriesTable {
  run_id: string;
  tenant_id: string;
  history: ColumnType<unknown, string, string>;
  event_count: number;
  created_at: CreatedAt;
}

/** Runs whose history the archiver has still to copy (db/run-history-queue.ts). */
export interface RunHistoryQueueTable {
  run_id: string;
  tenant_id: string;
  queued_at: CreatedAt;
  attempts: ColumnType<number, never, number>;
  last_error: ColumnType<string | null, never, string | null>;
  next_attempt_at: ColumnType<Date, never, Date>;
}

export interface RateLimitHitsTable {
  tenant_id: string;
  key_id: string;
  bucket: string;
  at: ColumnType<Date, Date | undefined, never>;
}

export interface UsersTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** scrypt, in the self-describing form `scrypt$N$r$p$salt$hash` (api/oauth/passwords.ts). */
  password_hash: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type MemberRole = 'owner' | 'admin' | 'member';

export interface MembershipsTable {
  /** `mem_…`: the `{id}` of /v1/members. */
  id: string;
  user_id: string;
  tenant_id: string;
  role: MemberRole;
  created_at: CreatedAt;
}

export interface InvitesTable {
  id: string;
  tenant_id: string;
  /** Lower-cased. */
  email: string;
  role: MemberRole;
  /** sha256 of the link's token, hex. */
  token_hash: string;
  created_at: CreatedAt;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
  revoked_at: Date | null;
}

export interface UserSessionsTable {
  /** sha256 of the session cookie's value, hex. */
  token_hash: string;
  user_id: string;
  created_at: CreatedAt;
  expires_at: Date;
}

export type OAuthClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface OAuthClientsTable {
  id: string;
  name: string;
  redirect_uris: ColumnType<string[], string, never>;
  token_endpoint_auth_method: OAuthClientAuthMethod;
  secret_hash: string | null;
  created_at: CreatedAt;
}

export interface OAuthGrantsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  client_id: string;
  scope: string;
  resource: string | null;
  created_at: CreatedAt;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  tenant_id: string;
  grant_id: string;
  redirect_uri: string | null;
  code_challenge: string | null;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  tenant_id: string;
  grant_id: string;
  resource: string | null;
  resource_path: string | null;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface OAuthRateHitsTable {
  bucket: string;
  subject: string;
  at: Date;
}

/** A scorer entry as stored; activities/evals/scorers validates it before it is stored. */
export interface StoredScorer {
  type: string;
  name?: string;
  threshold?: number;
  [field: string]: unknown;
}

export interface EvalSuitesTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  name: string;
  description: string | null;
  scorers: ColumnType<StoredScorer[], string, string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface EvalCasesTable {
  id: string;
  tenant_id: string;
  suite_id: string;
  input: string;
  expected: ColumnType<unknown, string | null, string | null>;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  tags: ColumnType<string[], string, string>;
  scorers: ColumnType<StoredScorer[] | null, string | null, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type ExperimentStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed';
export type CellStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

/** A variant as stored: what was asked for, and the version and graph its runs use (activities/evals/variants.ts). */
export interface StoredVariant {
  name: string;
  /** A version number of the agent; default: its published version. */
  agent_version?: number;
  /** `provider/model`, set on every node. */
  model?: string;
  /** A prompt (its current version, or `version`) set on every node. */
  prompt?: { name: string; version?: number };
  temperature?: number;
  /** A whole graph in place of the version's. */
  graph?: AgentGraph;
  /** Resolved when the experiment is created. */
  resolved: { agent_version_id: string; version: number; graph: AgentGraph };
}

export interface ExperimentsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  suite_id: string;
  suite_name: string;
  name: string;
  description: string | null;
  variants: ColumnType<StoredVariant[], string, string>;
  repeats: number;
  concurrency: number;
  primary_scorer: string | null;
  baseline_experiment_id: string | null;
  status: ExperimentStatus;
  error: ColumnType<RunError | null, string | null, string | null>;
  case_count: number;
  cell_count: number;
  last_event_seq: ColumnType<number, never, number>;
  /** Kept by the first read after the end (db/migrations/0007_experiment_snapshots.ts). */
  outcomes_snapshot: ColumnType<string | null, never, string>;
  matrix_snapshot: ColumnType<string | null, never, string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  started_at: Date | null;
  ended_at: Date | null;
}

export interface CellScore {
  score: number;
  passed: boolean;
  reason: string;
}

export interface ExperimentCellsTable {
  id: string;
  tenant_id: string;
  experiment_id: string;
  seq: number;
  case_id: string;
  case_index: number;
  variant_index: number;
  repeat: number;
  input: string;
  expected: ColumnType<unknown, string | null, string | null>;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  scorers: ColumnType<StoredScorer[], string, string>;
  status: CellStatus;
  run_id: string | null;
  output: string | null;
  scores: ColumnType<Record<string, CellScore> | null, string | null, string | null>;
  passed: boolean | null;
  latency_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: string | null;
  error: ColumnType<RunError | null, string | null, string | null>;
  started_at: Date | null;
  ended_at: Date | null;
}

export interface ExperimentEventsTable {
  experiment_id: string;
  seq: number;
  tenant_id: string;
  type: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  dedupe_key: string | null;
  created_at: CreatedAt;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  tools: ToolsTable;
  threads: ThreadsTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  run_steps: RunStepsTable;
  run_histories: RunHistoriesTable;
  run_history_queue: RunHistoryQueueTable;
  rate_limit_hits: RateLimitHitsTable;
  prompts: PromptsTable;
  prompt_versions: PromptVersionsTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  guardrails: GuardrailsTable;
  provider_connections: ProviderConnectionsTable;
  browser_sign_ins: BrowserSignInsTable;
  memories: MemoriesTable;
  knowledge_bases: KnowledgeBasesTable;
  documents: DocumentsTable;
  chunks: ChunksTable;
  kb_entities: KbEntitiesTable;
  kb_relations: KbRelationsTable;
  eval_suites: EvalSuitesTable;
  eval_cases: EvalCasesTable;
  experiments: ExperimentsTable;
  experiment_cells: ExperimentCellsTable;
  experiment_events: ExperimentEventsTable;
  schedules: SchedulesTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  channels: ChannelsTable;
  channel_messages: ChannelMessagesTable;
  channel_senders: ChannelSendersTable;
  voice_calls: VoiceCallsTable;
  voice_call_turns: VoiceCallTurnsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  invites: InvitesTable;
  user_sessions: UserSessionsTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  oauth_rate_hits: OAuthRateHitsTable;
  deployments: DeploymentsTable;
  deployment_threads: DeploymentThreadsTable;
  // Kysely's migration bookkeeping is left out on purpose: only the Migrator touches it.
}

export type Agent = Selectable<AgentsTable>;
export type AgentVersion = Selectable<AgentVersionsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type Tenant = Selectable<TenantsTable>;
export type Tool = Selectable<ToolsTable>;
export type Thread = Selectable<ThreadsTable>;
export type Run = Selectable<RunsTable>;
export type Schedule = Selectable<SchedulesTable>;
export type Webhook = Selectable<WebhooksTable>;
export type WebhookEvent = Selectable<WebhookEventsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type WebhookAttempt = Selectable<WebhookAttemptsTable>;
export type Deployment = Selectable<DeploymentsTable>;
export type Channel = Selectable<ChannelsTable>;
export type VoiceCall = Selectable<VoiceCallsTable>;
export type VoiceCallTurn = Selectable<VoiceCallTurnsTable>;
export type EvalSuite = Selectable<EvalSuitesTable>;
export type EvalCase = Selectable<EvalCasesTable>;
/** An experiment as read everywhere but the one read that wants its snapshot (db/experiments.ts). */
export type Experiment = Omit<Selectable<ExperimentsTable>, 'outcomes_snapshot' | 'matrix_snapshot'>;
export type ExperimentCell = Selectable<ExperimentCellsTable>;
export type ExperimentEvent = Selectable<ExperimentEventsTable>;
export type RunEvent = Selectable<RunEventsTable>;
export type RunStep = Selectable<RunStepsTable>;
export type Prompt = Selectable<PromptsTable>;
export type PromptVersion = Selectable<PromptVersionsTable>;
export type Skill = Selectable<SkillsTable>;
export type SkillVersion = Selectable<SkillVersionsTable>;
export type GuardrailRow = Selectable<GuardrailsTable>;
export type ProviderConnectionRow = Selectable<ProviderConnectionsTable>;
export type BrowserSignInRow = Selectable<BrowserSignInsTable>;
export type KnowledgeBase = Selectable<KnowledgeBasesTable>;
export type DocumentRow = Selectable<DocumentsTable>;
export type { Generated };
