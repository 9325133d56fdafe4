import { sql } from 'kysely';
import { findAgentVersion, findAgentVersionByNumber, findPublishedVersion } from './agents.js';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { strandedPage, type StrandedQuery } from './stranded-query.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { appendRunEvents, type RunEventType } from './run-events.js';
import type { AgentGraph, GuardrailTripRecord, PendingQuestion, Run, RunError, RunPromptUse, RunSkillUse, RunStatus } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';
import { insertThread, touchThread } from './threads.js';

/**
 * The `runs` table: a run's record from queued to its end. Its one column written elsewhere is
 * `last_event_seq`, the event log's counter, which db/run-events.ts advances.
 */

/** The statuses a run never leaves. */
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly RunStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isTerminal(status: RunStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly RunStatus[]).includes(status);
}

/** The events that announce a terminal status, after which a run's stream has nothing more to say. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set<RunEventType>(TERMINAL_STATUSES.map((status) => `run.${status}` as const));

export type RunSource = 'api' | 'eval' | 'schedule' | 'channel' | 'deployment';

export interface NewRun {
  tenantId: string;
  agentId: string;
  input: string;
  threadId?: string;
  source: RunSource;
  /** An eval's run: its experiment and cell, and the variant's version and graph instead of the published version's. */
  evalCell?: EvalCellRun;
  /** Runs this version of the agent rather than the published one. */
  pinnedVersion?: number;
  /** A subagent's run: the run and step that started it, and its depth below the run a client started. */
  parent?: { runId: string; step: number; depth: number };
  /** A scheduled run: its schedule and the Temporal run id of the firing that makes it. */
  schedule?: { scheduleId: string; firingId: string };
  /** A run an inbound channel started from a message or a call's turn. */
  channelId?: string;
  /** A run a deployment's publishable key started: it continues only a thread that deployment started. */
  deploymentId?: string;
}

export interface EvalCellRun {
  experimentId: string;
  cellId: string;
  agentVersionId: string;
  graph: AgentGraph;
}

export type QueuedRun =
  | { queued: true; runId: string; threadId: string }
  /** Nothing is written: the agent has no published version (or not the pinned one), or `threadId` is not a thread of the agent. */
  | { queued: false; reason: 'no_published_version' | 'unknown_version' | 'unknown_thread' };

/**
 * Records a queued run of the agent's published version, in its thread (a new one unless given), with its
 * `run.created` event.
 */
export async function createQueuedRun(tx: TenantTx, run: NewRun): Promise<QueuedRun> {
  const version = run.evalCell
    ? await findAgentVersion(tx, run.tenantId, run.evalCell.agentVersionId)
    : run.pinnedVersion !== undefined
      ? await findAgentVersionByNumber(tx, run.tenantId, run.agentId, run.pinnedVersion)
      : await findPublishedVersion(tx, run.tenantId, run.agentId);
  if (!version) return { queued: false, reason: run.pinnedVersion !== undefined ? 'unknown_version' : 'no_published_version' };

  let threadId: string;
  if (run.threadId) {
    if (run.deploymentId && !(await isThreadOfDeployment(tx, run.tenantId, run.threadId, run.deploymentId))) return { queued: false, reason: 'unknown_thread' };
    if (!(await touchThread(tx, run.tenantId, run.threadId, { agentId: run.agentId }))) return { queued: false, reason: 'unknown_thread' };
    threadId = run.threadId;
  } else {
    threadId = await insertThread(tx, run.tenantId, run.agentId, run.input, run.source);
  }

  const runId = newId('run');
  await tx
    .insertInto('runs')
    .values({
      id: runId,
      tenant_id: run.tenantId,
      agent_id: run.agentId,
      agent_version_id: version.id,
      version: version.version,
      thread_id: threadId,
      status: 'queued',
      source: run.source,
      experiment_id: run.evalCell?.experimentId ?? null,
      cell_id: run.evalCell?.cellId ?? null,
      graph_override: run.evalCell ? JSON.stringify(run.evalCell.graph) : null,
      model: entryModel(run.evalCell?.graph ?? version.graph),
      input: run.input,
      output: null,
      error: null,
      pending_question: null,
      prompt_tokens: null,
      completion_tokens: null,
      total_tokens: null,
      cost_usd: null,
      duration_ms: null,
      started_at: null,
      ended_at: null,
      // Only a subagent's run names these, so a run's insert stays what it was before subagents.
      ...(run.parent ? { parent_run_id: run.parent.runId, parent_step: run.parent.step, depth: run.parent.depth } : {}),
      ...(run.schedule ? { schedule_id: run.schedule.scheduleId, schedule_firing_id: run.schedule.firingId } : {}),
      ...(run.channelId ? { channel_id: run.channelId } : {}),
      ...(run.deploymentId ? { deployment_id: run.deploymentId } : {}),
    })
    .execute();
  await appendRunEvents(tx, run.tenantId, runId, [
    {
      type: 'run.created',
      data: { run_id: runId, agent_id: run.agentId, version: version.version, thread_id: threadId, status: 'queued' },
    },
  ]);
  return { queued: true, runId, threadId };
}

/** Whether the deployment started this thread (its runs name the deployment). */
async function isThreadOfDeployment(tx: TenantTx, tenantId: string, threadId: string, deploymentId: string): Promise<boolean> {
  const run = await tx.selectFrom('runs').select('id').where('tenant_id', '=', tenantId).where('deployment_id', '=', deploymentId).where('thread_id', '=', threadId).limit(1).executeTakeFirst();
  return run !== undefined;
}

/** The model of the graph's entry node, recorded on the queued run until the plan says otherwise. */
function entryModel(graph: AgentGraph): string | null {
  const entryId = typeof graph.entry === 'string' ? graph.entry : graph.nodes[0]?.id;
  const model = graph.nodes.find((node) => node.id === entryId)?.model;
  return typeof model === 'string' ? model : null;
}

/**
 * The runs this run recorded as subagents: their status, usage and cost (theirs include their own
 * children's), locked until the transaction ends, so a child read as queued cannot begin or end meanwhile.
 */
export async function lockChildRuns(tx: TenantTx, tenantId: string, parentRunId: string) {
  return tx
    .selectFrom('runs')
    .select(['id', 'status', 'prompt_tokens', 'completion_tokens', 'cost_usd'])
    .where('tenant_id', '=', tenantId)
    .where('parent_run_id', '=', parentRunId)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** The child run a subagent call (the parent's step `step`) started, if it did. */
export async function findChildRun(reader: TenantScoped, tenantId: string, parentRunId: string, step: number): Promise<Run | undefined> {
  return reader.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('parent_run_id', '=', parentRunId).where('parent_step', '=', step).executeTakeFirst();
}

/** The run a schedule's firing (its Temporal run id) made, if it made one. */
export async function findRunOfFiring(tx: TenantTx, tenantId: string, firingId: string): Promise<Pick<Run, 'id' | 'agent_id'> | undefined> {
  return tx.selectFrom('runs').select(['id', 'agent_id']).where('tenant_id', '=', tenantId).where('schedule_firing_id', '=', firingId).executeTakeFirst();
}

/** The schedule's most recent runs, newest first. */
export async function listScheduleRuns(tx: TenantTx, tenantId: string, scheduleId: string, limit: number) {
  return tx
    .selectFrom('runs')
    .select(['id', 'status', 'thread_id', 'created_at', 'ended_at'])
    .where('tenant_id', '=', tenantId)
    .where('schedule_id', '=', scheduleId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function findRun(reader: TenantScoped, tenantId: string, runId: string): Promise<Run | undefined> {
  return reader.selectFrom('runs').selectAll().where('id', '=', runId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The run, its row locked until the transaction ends: for a change that depends on the status it finds. */
export async function lockRun(tx: TenantTx, tenantId: string, runId: string): Promise<Run | undefined> {
  return tx.selectFrom('runs').selectAll().where('id', '=', runId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
}

/**
 * The run, locked as lockRun locks it, with the graph of its agent version: what beginRun reads first,
 * in one statement. The version is the run's by a cascading foreign key, so its graph is null only if
 * the two rows' tenants do not match.
 */
export async function lockRunWithGraph(tx: TenantTx, tenantId: string, runId: string) {
  return tx
    .selectFrom('runs')
    .leftJoin('agent_versions', (join) => join.onRef('agent_versions.id', '=', 'runs.agent_version_id').onRef('agent_versions.tenant_id', '=', 'runs.tenant_id'))
    .selectAll('runs')
    .select('agent_versions.graph as version_graph')
    .where('runs.id', '=', runId)
    .where('runs.tenant_id', '=', tenantId)
    .forUpdate('runs')
    .executeTakeFirst();
}

/** Only the status: what a stream checks while it follows a run. */
export async function findRunStatus(reader: TenantScoped, tenantId: string, runId: string): Promise<RunStatus | undefined> {
  const run = await reader.selectFrom('runs').select('status').where('id', '=', runId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return run?.status;
}

/** How many waiting questions one workspace's inbox shows. */
export const PAUSED_RUNS_LIMIT = 200;

/**
 * The workspace's top-level runs waiting on a question, with their agent's name, the most recently asked
 * first (the console's inbox); `ids` narrows them to those runs. A subagent's question is its top run's
 * (whose question id carries the path to the child, docs/subagents.md), so child runs are left out.
 */
export async function listPausedRuns(reader: TenantScoped, tenantId: string, ids?: string[]) {
  let q = reader
    .selectFrom('runs')
    .leftJoin('agents', (join) => join.onRef('agents.id', '=', 'runs.agent_id').onRef('agents.tenant_id', '=', 'runs.tenant_id'))
    .select(['runs.id', 'runs.agent_id', 'agents.name as agent_name', 'runs.thread_id', 'runs.input', 'runs.pending_question', 'runs.source', 'runs.created_at'])
    .where('runs.tenant_id', '=', tenantId)
    .where('runs.status', '=', 'paused')
    .where('runs.parent_run_id', 'is', null)
    .where('runs.pending_question', 'is not', null);
  if (ids) {
    if (ids.length === 0) return [];
    q = q.where('runs.id', 'in', ids);
  }
  return q.orderBy(sql`runs.pending_question->>'asked_at'`, 'desc').orderBy('runs.id', 'desc').limit(PAUSED_RUNS_LIMIT).execute();
}

/** Only which top-level runs wait on which question, newest first: what the inbox compares on each wake-up. */
export async function listPausedQuestionKeys(reader: TenantScoped, tenantId: string): Promise<{ runId: string; questionId: string; askedAt: string }[]> {
  const rows = await reader
    .selectFrom('runs')
    .select(['id', sql<string>`pending_question->>'id'`.as('question_id'), sql<string>`pending_question->>'asked_at'`.as('asked_at')])
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'paused')
    .where('parent_run_id', 'is', null)
    .where('pending_question', 'is not', null)
    .orderBy(sql`pending_question->>'asked_at'`, 'desc')
    .orderBy('id', 'desc')
    .limit(PAUSED_RUNS_LIMIT)
    .execute();
  return rows.map((row) => ({ runId: row.id, questionId: row.question_id, askedAt: row.asked_at }));
}

export interface RunFilter {
  agentId?: string;
  /** By default eval runs are left out; `all` includes them. */
  source?: RunSource | 'all';
  /** The subagent runs this run started. */
  parentRunId?: string;
}

const runsPage = preparedPage(
  'id',
  (db, values: { tenantId: string; agentId?: string; parentRunId?: string; source?: RunSource; notSource?: RunSource }) => {
    let q = db.selectFrom('runs').selectAll().where('tenant_id', '=', values.tenantId);
    if (values.agentId !== undefined) q = q.where('agent_id', '=', values.agentId);
    if (values.parentRunId !== undefined) q = q.where('parent_run_id', '=', values.parentRunId);
    if (values.source !== undefined) q = q.where('source', '=', values.source);
    if (values.notSource !== undefined) q = q.where('source', '!=', values.notSource);
    return q;
  },
  'desc',
);

/** A page of runs, most recent first (the cursor is the last run of the previous page). */
export async function listRunsPage(reader: TenantScoped, tenantId: string, filter: RunFilter, pageQuery: PageQuery): Promise<Page<Run>> {
  const bySource = filter.source === undefined ? { notSource: 'eval' as const } : filter.source === 'all' ? {} : { source: filter.source };
  return runsPage(reader, { tenantId, agentId: filter.agentId || undefined, parentRunId: filter.parentRunId || undefined, ...bySource }, pageQuery);
}

/** Every run of the thread, oldest first: its turns. */
export async function listThreadRuns(reader: TenantScoped, tenantId: string, threadId: string) {
  return reader
    .selectFrom('runs')
    .select(['id', 'input', 'output', 'status', 'created_at'])
    .where('thread_id', '=', threadId)
    .where('tenant_id', '=', tenantId)
    .orderBy('id')
    .execute();
}

/** The thread's completed runs before `beforeRunId`: the turns a run of that thread continues. */
function completedRunsBefore(reader: TenantScoped, tenantId: string, threadId: string, beforeRunId: string) {
  return reader
    .selectFrom('runs')
    .where('tenant_id', '=', tenantId)
    .where('thread_id', '=', threadId)
    .where('id', '<', beforeRunId)
    .where('status', '=', 'completed');
}

/**
 * The latest of those runs whose inputs and outputs together hold at most `maxChars` characters, oldest
 * first: the conversation a new run continues, older turns left out whole.
 */
export async function listRecentCompletedRunsWithin(reader: TenantScoped, tenantId: string, threadId: string, beforeRunId: string, maxChars: number) {
  const runs = completedRunsBefore(reader, tenantId, threadId, beforeRunId)
    .select(['id', 'input', 'output'])
    .select(sql<number>`sum(length(input) + coalesce(length(output), 0)) over (order by id desc)`.as('chars_since'))
    .as('runs');
  return reader.selectFrom(runs).select(['input', 'output']).where('chars_since', '<=', maxChars).orderBy('id').execute();
}

/** The last `last` of those runs, oldest first (the console's context): read newest first and put back in order. */
export async function listCompletedRunsBefore(reader: TenantScoped, tenantId: string, threadId: string, beforeRunId: string, last: number) {
  const latest = await completedRunsBefore(reader, tenantId, threadId, beforeRunId).select(['input', 'output']).orderBy('id', 'desc').limit(last).execute();
  return latest.reverse();
}

/** queued → running, with the prompt versions the plan chose and its entry model. A run past queued is left alone. */
export async function markRunRunning(tx: TenantTx, tenantId: string, runId: string, plan: { prompts: RunPromptUse[]; model: string }): Promise<void> {
  await tx
    .updateTable('runs')
    .set({ status: 'running', started_at: new Date(), prompts: JSON.stringify(plan.prompts), model: plan.model })
    .where('id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'queued')
    .execute();
}

/** Adds a skill version the run loaded to `runs.skills`, once: a retried activity adds nothing. */
export async function addRunSkillUse(tx: TenantTx, tenantId: string, runId: string, use: RunSkillUse): Promise<void> {
  const entry = JSON.stringify([use]);
  await tx
    .updateTable('runs')
    .set({ skills: sql<string>`skills || ${entry}::jsonb` })
    .where('id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`not (skills @> ${entry}::jsonb)`)
    .execute();
}

/** running → paused, with the question it waits on. */
export async function markRunPaused(tx: TenantTx, tenantId: string, runId: string, question: PendingQuestion): Promise<void> {
  await setLiveStatus(tx, tenantId, runId, 'paused', JSON.stringify(question));
}

/** paused → running: the question is answered. */
export async function markRunResumed(tx: TenantTx, tenantId: string, runId: string): Promise<void> {
  await setLiveStatus(tx, tenantId, runId, 'running', null);
}

/** Moves a run between running and paused; a run that has ended stays ended. */
async function setLiveStatus(tx: TenantTx, tenantId: string, runId: string, status: 'running' | 'paused', pendingQuestion: string | null) {
  await tx
    .updateTable('runs')
    .set({ status, pending_question: pendingQuestion })
    .where('id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', ['running', 'paused'])
    .execute();
}

export interface RunEnd {
  status: TerminalStatus;
  output: string | null;
  error: RunError | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null; cost_usd: string | null };
}

/**
 * Records the run's end (status, output or error, usage, end time and duration) unless it has already
 * ended, and answers what the end event and the thread need: this end's, or the one recorded before (a
 * retried finish, `recordedBefore`).
 *
 * One statement in the usual case: the duration is counted from the row's own start in the update,
 * not read first (a round trip of every run's finish; docs/performance.md).
 */
export async function recordRunEnd(
  tx: TenantTx,
  tenantId: string,
  runId: string,
  end: RunEnd,
): Promise<{ threadId: string; endedAt: Date; durationMs: number; recordedBefore: boolean }> {
  const endedAt = new Date();
  const recorded = await tx
    .updateTable('runs')
    .set({
      status: end.status,
      output: end.output,
      error: end.error ? JSON.stringify(end.error) : null,
      pending_question: null,
      prompt_tokens: end.usage.prompt_tokens,
      completion_tokens: end.usage.completion_tokens,
      total_tokens: end.usage.total_tokens,
      cost_usd: end.usage.cost_usd,
      ended_at: endedAt,
      duration_ms: sql<number>`round(extract(epoch from ${endedAt}::timestamptz - coalesce(started_at, created_at)) * 1000)`,
    })
    .where('id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'not in', TERMINAL_STATUSES)
    .returning(['thread_id', 'ended_at', 'duration_ms'])
    .executeTakeFirst();
  const run =
    recorded ??
    (await tx
      .selectFrom('runs')
      .select(['thread_id', 'ended_at', 'duration_ms'])
      .where('id', '=', runId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow());
  return { threadId: run.thread_id, endedAt: run.ended_at ?? endedAt, durationMs: run.duration_ms ?? 0, recordedBefore: !recorded };
}

/** Adds guardrail trips to the run's record. */
export async function appendGuardrailTrips(tx: TenantTx, tenantId: string, runId: string, trips: GuardrailTripRecord[]): Promise<void> {
  await tx
    .updateTable('runs')
    .set({ guardrail_trips: sql`guardrail_trips || ${JSON.stringify(trips)}::jsonb` as never })
    .where('id', '=', runId)
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** These runs of the workspace (a voice call's turns'), oldest first. */
export async function listRunsByIds(reader: TenantScoped, tenantId: string, runIds: string[]): Promise<Run[]> {
  if (runIds.length === 0) return [];
  return reader.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', runIds).orderBy('id').execute();
}

/**
 * Every tenant's runs (the owner role, past row-level security) still `queued` as `query` says
 * (db/stranded-query.ts) that nothing else is responsible for starting: a client's, a deployment's or a
 * channel's. A subagent's run is its parent workflow's to start, a scheduled one its firing's, an eval's
 * its cell's; each of those retries its own start.
 */
export async function listStrandedRuns(db: Db, query: StrandedQuery) {
  const waiting = db
    .selectFrom('runs')
    .select(['id', 'tenant_id', 'agent_id', 'source'])
    .where('status', '=', 'queued')
    .where('parent_run_id', 'is', null)
    .where('schedule_id', 'is', null)
    .where('experiment_id', 'is', null);
  return strandedPage(waiting, query).execute();
}
