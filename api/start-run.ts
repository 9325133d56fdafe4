import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { newId } from '../db/ids.js';
import { appendRunEvents } from '../db/run-events.js';
import type { AgentVersion } from '../db/schema.js';
import type { TenantTx } from '../db/tenant-transaction.js';
import { AGENT_RUN_TASK_QUEUE, AGENT_RUN_WORKFLOW_TYPE } from '../workflows/agent-run-api.js';
import type { agentRun } from '../workflows/agent-run.js';
import { ApiError, notFound } from './errors.js';

export const TenantIdAttribute = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const AgentIdAttribute = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const RunSourceAttribute = defineSearchAttributeKey('RunSource', SearchAttributeType.KEYWORD);

export interface NewRun {
  tenantId: string;
  agentId: string;
  input: string;
  threadId?: string;
  source: 'api' | 'eval';
}

/**
 * Records a queued run of the agent's published version, in its thread (a new one unless given), with its
 * `run.created` event. 409 when nothing is published; 404 for a thread of another agent.
 */
export async function insertRun(tx: TenantTx, run: NewRun): Promise<{ runId: string; threadId: string }> {
  const version = await tx
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_id', '=', run.agentId)
    .where('tenant_id', '=', run.tenantId)
    .where('status', '=', 'published')
    .executeTakeFirst();
  if (!version) throw new ApiError('conflict', 'the agent has no published version; POST /v1/agents/{id}/versions first');

  const threadId = run.threadId ?? newId('thr');
  if (run.threadId) {
    const thread = await tx
      .updateTable('threads')
      .set({ updated_at: new Date() })
      .where('id', '=', run.threadId)
      .where('agent_id', '=', run.agentId)
      .where('tenant_id', '=', run.tenantId)
      .returning('id')
      .executeTakeFirst();
    if (!thread) throw notFound('thread', run.threadId);
  } else {
    await tx.insertInto('threads').values({ id: threadId, tenant_id: run.tenantId, agent_id: run.agentId, title: threadTitle(run.input) }).execute();
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
      model: entryModel(version),
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
    })
    .execute();
  await appendRunEvents(tx, run.tenantId, runId, [
    {
      type: 'run.created',
      data: { run_id: runId, agent_id: run.agentId, version: version.version, thread_id: threadId, status: 'queued' },
    },
  ]);
  return { runId, threadId };
}

/** Starts the run's workflow: id = run id, on the `runs` queue, findable in the Temporal UI by tenant, agent and source. */
export async function startAgentRunWorkflow(temporal: Client, run: NewRun & { runId: string }): Promise<void> {
  await temporal.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, {
    workflowId: run.runId,
    taskQueue: AGENT_RUN_TASK_QUEUE,
    args: [{ tenantId: run.tenantId, runId: run.runId }],
    typedSearchAttributes: [
      { key: TenantIdAttribute, value: run.tenantId },
      { key: AgentIdAttribute, value: run.agentId },
      { key: RunSourceAttribute, value: run.source },
    ],
  });
}

function threadTitle(input: string): string {
  const line = input.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'untitled';
}

function entryModel(version: AgentVersion): string | null {
  const { graph } = version;
  const entryId = typeof graph.entry === 'string' ? graph.entry : graph.nodes[0]?.id;
  const model = graph.nodes.find((node) => node.id === entryId)?.model;
  return typeof model === 'string' ? model : null;
}
