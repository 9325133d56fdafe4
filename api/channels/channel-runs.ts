import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { createQueuedRun, type NewRun } from '../../db/runs.js';
import type { Run } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { RUN_RATE_LIMIT, takeRateLimitTokenNow } from '../rate-limit.js';
import { startAgentRunWorkflow } from '../../activities/runs/start-run-workflow.js';

/**
 * How a channel starts runs: the path POST /v1/agents/{id}/runs takes (a queued run recorded with its
 * `run.created` event, then its workflow started), counted by the same per-key run limit with the
 * channel as the key, and marked `source: "channel"` with the channel's id.
 */

export type ChannelRun = NewRun & { runId: string; threadId: string };

/** One run request of the channel against RUN_RATE_LIMIT, in a transaction of its own so refused requests count too. */
export async function takeChannelRunToken(deps: AppDeps, tenantId: string, channelId: string): Promise<Record<string, string>> {
  return takeRateLimitTokenNow(deps.db, tenantId, channelId, RUN_RATE_LIMIT);
}

/**
 * Records a queued run of the agent's published version continuing `threadId`, or in a new thread when
 * there is none or it is gone (deleted, or the channel now runs another agent). 409 when the agent has
 * nothing published.
 */
export async function queueChannelRun(tx: TenantTx, run: { tenantId: string; agentId: string; channelId: string; input: string; threadId: string | undefined }): Promise<ChannelRun> {
  const newRun: NewRun = { tenantId: run.tenantId, agentId: run.agentId, input: run.input, threadId: run.threadId, source: 'channel', channelId: run.channelId };
  let queued = await createQueuedRun(tx, newRun);
  if (!queued.queued && queued.reason === 'unknown_thread') queued = await createQueuedRun(tx, { ...newRun, threadId: undefined });
  if (!queued.queued) throw new ApiError('conflict', "the channel's agent has no published version; POST /v1/agents/{id}/versions first");
  return { ...newRun, runId: queued.runId, threadId: queued.threadId };
}

/**
 * Starts the run's workflow once its run is committed, or leaves it be when it is started already: two
 * deliveries of one message (the first and a retry that saw its run still queued) may both get here, and
 * the workflow id is the run id, so the later start fails as already started, which is success here.
 */
export async function startChannelRun(deps: AppDeps, run: ChannelRun | Run): Promise<void> {
  if ('status' in run && run.status !== 'queued') return;
  const start = 'status' in run ? { tenantId: run.tenant_id, agentId: run.agent_id, input: run.input, threadId: run.thread_id, source: 'channel' as const, runId: run.id } : run;
  await startAgentRunWorkflow(deps.runStarter, start).catch((err: unknown) => {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  });
}
