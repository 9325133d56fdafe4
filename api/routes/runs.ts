import { WorkflowNotFoundError } from '@temporalio/client';
import type Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { startRunOrEndIt } from '../../activities/runs/start-run-workflow.js';
import { WorkNotStartedError } from '../../activities/start-recorded-work.js';
import { endUnstartedRun } from '../../activities/runs/unstarted-run.js';
import { findAgent } from '../../db/agents.js';
import { agentOr404 } from './agents.js';
import type { PageQuery } from '../../db/page.js';
import { hasRunHistory } from '../../db/run-histories.js';
import { listRunSteps } from '../../db/run-steps.js';
import type { TenantScoped } from '../../db/tenant-transaction.js';
import { createQueuedRun, findRun, isTerminal, listRunsPage } from '../../db/runs.js';
import type { Run } from '../../db/schema.js';
import { failureTypeOf } from '../../workflows/failures.js';
import { REPLAY_RUN_FAILURES, REPLAY_RUN_TASK_QUEUE, REPLAY_RUN_WORKFLOW_TYPE } from '../../workflows/replay-run-api.js';
import type { replayRun as replayRunWorkflow } from '../../workflows/replay-run.js';
import { answerPausedRun } from '../answer-run.js';
import { ApiError, notFound } from '../errors.js';
import { defineOperation, type Caller, type JsonSchema, type OperationContext } from '../operation.js';
import { insertDeploymentThread } from '../../db/deployments.js';
import { agentOfCaller, runOfCaller, runOrigin, takeRunRateLimit, threadOfCaller, VISITOR_TOKEN_HEADER } from '../deployments/scope.js';
import { visitorFrame, visitorRun } from '../deployments/visitor-events.js';
import { refOr404 } from '../ref-or-404.js';
import { releaseReplaySlot, REPLAY_SLOTS_PER_TENANT, takeReplaySlot } from '../replay-slots.js';
import { runJson, runSchema, stepJson, stepSchema } from '../run-json.js';
import { closedObject, listOf, MAX_REQUEST_INTEGER, pageQuery, pathParams, refParams, serverSentEvent } from '../schemas.js';
import { SSE_HEADERS, streamRunEvents } from '../sse.js';
import { credentialRecheck } from '../stream-credential.js';
import { holdStreamSlot } from '../stream-slots.js';
import { TenantIdAttribute } from '../../workflows/search-attributes.js';
import { tenantFairness } from '../../activities/tenant-fairness.js';

const TAG = 'Runs';

const eventStream = {
  description:
    'Server-Sent Events: one frame per run event (`id: <seq>`, `event: <type>`, `data: <JSON>`), `: ping` comments every 15 s. ' +
    'The stream ends after `run.completed`, `run.failed` or `run.cancelled`, or at `run.paused` while the run waits for an answer.',
  contentType: 'text/event-stream',
  schema: serverSentEvent,
};

const runIdParams = pathParams(['runId']);
const runOr404 = refOr404(findRun, 'run');

/** The run, or 404 — also when the caller is a publishable key the run is not visible to (api/deployments/scope.ts). */
async function callersRunOr404(reader: TenantScoped, caller: Caller, runId: string, koa: Koa.Context): Promise<Run> {
  return runOfCaller(reader, caller, await runOr404(reader, caller.tenantId, runId), runId, koa.get(VISITOR_TOKEN_HEADER));
}

export const startRun = defineOperation<{ id: string }, unknown, { input: string; thread_id?: string }>({
  operationId: 'startRun',
  method: 'post',
  path: '/v1/agents/{id}/runs',
  tag: 'Agents',
  summary: "Run the agent's published version; answers the run's event stream",
  description:
    'Without `thread_id` the run starts a new thread (its id is in `run.created`); with one, it continues that thread. Limited to 60 requests per 60 s per API key. ' +
    "A deployment's publishable key runs its deployment's agent only (its pinned version, if any), under the deployment's limits (docs/deployments.md). " +
    "For a publishable key, a new thread's `run.created` event carries `visitor_token` (once; it is not stored in the log): send it as the `X-Visitor-Token` header to read, follow, answer and continue that thread's runs. " +
    'Its stream shows only `run.*`, `message.delta`, `message.completed` (without tool calls or usage) and `attempt.reset` events.',
  access: 'key',
  publishable: true,
  params: refParams,
  body: closedObject({ input: { type: 'string', minLength: 1, maxLength: 200_000 }, thread_id: { type: 'string', minLength: 1 } }, { required: ['input'] }),
  errors: ['not_found', 'conflict', 'rate_limited'],
  responses: { 200: eventStream },
  handler: async ({ params, body, caller, tenant, deps, koa }) => {
    // The answer is a stream: refused before the run is recorded when the workspace has too many open.
    holdStreamSlot(koa, caller);
    // Counted in a transaction of its own, so refused requests count too.
    const rateHeaders = await takeRunRateLimit(deps.db, caller, koa.ip);
    const run = await tenant(async (tx) => {
      const agent = agentOfCaller(caller, await agentOr404(tx, caller.tenantId, params.id), params.id);
      if (body.thread_id) await threadOfCaller(tx, caller, body.thread_id, koa.get(VISITOR_TOKEN_HEADER));
      const newRun = { tenantId: caller.tenantId, agentId: agent.id, input: body.input, threadId: body.thread_id, ...runOrigin(caller) };
      const queued = await createQueuedRun(tx, newRun);
      if (queued.queued) {
        const visitorToken = caller.deployment && !body.thread_id ? await insertDeploymentThread(tx, caller.tenantId, caller.deployment.id, queued.threadId) : undefined;
        return { ...newRun, runId: queued.runId, threadId: queued.threadId, visitorToken };
      }
      if (queued.reason === 'unknown_thread') throw notFound('thread', body.thread_id!);
      if (queued.reason === 'unknown_version') throw new ApiError('conflict', `the deployment's pinned version ${newRun.pinnedVersion} of the agent does not exist`);
      throw new ApiError('conflict', 'the agent has no published version; POST /v1/agents/{id}/versions first');
    });
    await startRunOrEndIt({ db: deps.db, temporal: deps.runStarter }, run).catch((err: unknown) => {
      throw err instanceof WorkNotStartedError ? new ApiError('unavailable', `${err.message}; the run ${run.runId} is recorded as failed`) : err;
    });
    const reply = streamRunEvents(koa, deps, caller.tenantId, run.runId, 0, {
      frame: caller.deployment && visitorFrame(run.visitorToken),
      access: credentialRecheck(koa, deps, caller),
    });
    return { ...reply, headers: { ...SSE_HEADERS, ...rateHeaders } };
  },
});

export const streamEvents = defineOperation<{ runId: string }, { after?: number }>({
  operationId: 'streamRunEvents',
  method: 'get',
  path: '/v1/runs/{runId}/events',
  tag: TAG,
  summary: "Stream a live or finished run's events, resuming after Last-Event-ID",
  description:
    'Replays the persisted trace from the start, or after the `Last-Event-ID` header (or `after` query) sequence number, then follows the run live. ' +
    "A publishable key's caller must send its thread's `X-Visitor-Token` (docs/deployments.md); without the right one the run is 404. Its stream shows only the run's own, message and `attempt.reset` events." ,
  access: 'key',
  publishable: true,
  params: runIdParams,
  query: { type: 'object', additionalProperties: false, properties: { after: { type: 'integer', minimum: 0, maximum: MAX_REQUEST_INTEGER } } },
  errors: ['not_found', 'rate_limited'],
  responses: { 200: eventStream },
  handler: async ({ params, query, caller, tenantReads, deps, koa }) => {
    holdStreamSlot(koa, caller);
    await tenantReads(async (reader) => callersRunOr404(reader, caller, params.runId, koa));
    const lastEventId = koa.get('Last-Event-ID');
    // Nine digits at most: a larger number is no sequence number of ours, and would overflow the query.
    const after = /^\d{1,9}$/.test(lastEventId) ? Number(lastEventId) : (query.after ?? 0);
    return streamRunEvents(koa, deps, caller.tenantId, params.runId, after, {
      frame: caller.deployment && visitorFrame(),
      access: credentialRecheck(koa, deps, caller),
    });
  },
});

export const getRun = defineOperation<{ runId: string }>({
  operationId: 'getRun',
  method: 'get',
  path: '/v1/runs/{runId}',
  tag: TAG,
  summary: 'A run with its steps (the tool-call trace) in order',
  description: "A publishable key's caller must send its thread's `X-Visitor-Token` (docs/deployments.md); without the right one the run is 404. It gets no steps, prompts, skills or guardrail trips (empty lists).",
  access: 'key',
  publishable: true,
  params: runIdParams,
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The run and its steps',
      schema: closedObject({ run: runSchema, steps: { type: 'array', items: stepSchema } }),
    },
  },
  handler: async ({ params, caller, tenantReads, koa }) => {
    const { run, steps } = await tenantReads(async (reader) => ({
      run: await callersRunOr404(reader, caller, params.runId, koa),
      steps: await listRunSteps(reader, caller.tenantId, params.runId),
    }));
    // A website's visitor sees the conversation, not the tool calls, prompts and guardrail findings behind it.
    if (caller.deployment) return { status: 200, body: { run: visitorRun(runJson(run)), steps: [] } };
    return { status: 200, body: { run: runJson(run), steps: steps.map(stepJson) } };
  },
});

type RunListQuery = PageQuery & { agent?: string; source?: 'api' | 'eval' | 'schedule' | 'channel' | 'deployment' | 'all'; parent_run_id?: string };

function runListQuery(withAgentFilter: boolean): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...(pageQuery.properties as object),
      ...(withAgentFilter && { agent: { type: 'string', minLength: 1, description: 'Only runs of this agent (id or name); one that names no agent gives an empty list.' } }),
      source: {
        enum: ['api', 'eval', 'schedule', 'channel', 'deployment', 'all'],
        description: 'Only runs from this source. By default eval runs are left out; `all` includes them.',
      },
      parent_run_id: { type: 'string', minLength: 1, description: 'Only the subagent runs this run started.' },
    },
  };
}

async function listRuns({ query, caller, tenantReads }: OperationContext<unknown, RunListQuery, unknown>, agentRef?: string) {
  const { items, nextCursor } = await tenantReads(async (reader) => {
    const filter = { source: query.source, parentRunId: query.parent_run_id };
    if (agentRef) return listRunsPage(reader, caller.tenantId, { ...filter, agentId: (await agentOr404(reader, caller.tenantId, agentRef)).id }, query);
    // A filter is not an address: an `agent` that names no agent matches no run (the spec lists 200 and 401 only).
    const filtered = query.agent ? await findAgent(reader, caller.tenantId, query.agent) : undefined;
    if (query.agent && !filtered) return { items: [], nextCursor: null };
    return listRunsPage(reader, caller.tenantId, { ...filter, agentId: filtered?.id }, query);
  });
  return { status: 200, body: { runs: items.map(runJson), next_cursor: nextCursor } };
}

export const listAllRuns = defineOperation<Record<string, never>, RunListQuery>({
  operationId: 'listRuns',
  method: 'get',
  path: '/v1/runs',
  tag: TAG,
  summary: 'Runs, most recent first (eval runs only when asked for with `source`)',
  access: 'key',
  query: runListQuery(true),
  responses: { 200: { description: 'A page of runs', schema: listOf('runs', runSchema) } },
  handler: (ctx) => listRuns(ctx),
});

export const listAgentRuns = defineOperation<{ id: string }, RunListQuery>({
  operationId: 'listAgentRuns',
  method: 'get',
  path: '/v1/agents/{id}/runs',
  tag: 'Agents',
  summary: "The agent's runs, most recent first",
  access: 'key',
  params: refParams,
  query: runListQuery(false),
  errors: ['not_found'],
  responses: { 200: { description: 'A page of runs', schema: listOf('runs', runSchema) } },
  handler: (ctx) => listRuns(ctx, ctx.params.id),
});

export const answerRun = defineOperation<{ runId: string }, unknown, { answer: string; question_id?: string }>({
  operationId: 'answerRun',
  method: 'post',
  path: '/v1/runs/{runId}/answer',
  tag: TAG,
  summary: "Answer the paused run's `ask_human` question; the run continues",
  description:
    'Each question takes one answer: a second one, or an answer to a run that is not paused, is 409. Follow the rest with GET /v1/runs/{runId}/events. ' +
    "A publishable key's caller must send its thread's `X-Visitor-Token` (docs/deployments.md); without the right one the run is 404.",
  access: 'key',
  publishable: true,
  params: runIdParams,
  body: closedObject({ answer: { type: 'string', maxLength: 200_000 }, question_id: { type: 'string', minLength: 1 } }, { required: ['answer'] }),
  errors: ['not_found', 'conflict'],
  responses: {
    200: {
      description: 'Accepted; the run is running again',
      schema: closedObject({ run_id: { type: 'string' }, question_id: { type: 'string' }, status: { const: 'running' } }),
    },
  },
  handler: async ({ params, body, caller, tenant, deps, koa }) => {
    const run = await tenant(async (tx) => callersRunOr404(tx, caller, params.runId, koa));
    const questionId = await answerPausedRun(deps.temporal, run, { answer: body.answer, questionId: body.question_id });
    return { status: 200, body: { run_id: run.id, question_id: questionId, status: 'running' } };
  },
});

export const cancelRun = defineOperation<{ runId: string }>({
  operationId: 'cancelRun',
  method: 'post',
  path: '/v1/runs/{runId}/cancel',
  tag: TAG,
  summary: 'Cancel a run: its workflow is cancelled and an in-flight model call aborted',
  description: 'Answers at once; the run becomes `cancelled` (event `run.cancelled`) as soon as the workflow has wound down.',
  access: 'key',
  params: runIdParams,
  errors: ['not_found', 'conflict'],
  responses: {
    202: {
      description: 'Cancellation requested',
      schema: closedObject({ run_id: { type: 'string' }, status: { const: 'cancelling' } }),
    },
  },
  handler: async ({ params, caller, tenant, deps }) => {
    const run = await tenant((tx) => runOr404(tx, caller.tenantId, params.runId));
    if (isTerminal(run.status)) throw new ApiError('conflict', `run ${run.id} already ended (${run.status})`);
    try {
      await deps.temporal.workflow.getHandle(run.id).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Recorded but never started (its API stopped first): nothing to wind down, so it ends here, and the
      // stranded-work sweep does not start it later. Moved on meanwhile: ended (the sweep gave it up), or
      // begun by a workflow the sweep started, which is cancelled instead.
      if (!(await endUnstartedRun(deps, { tenantId: caller.tenantId, runId: run.id }, { status: 'cancelled' }))) {
        const now = await tenant((tx) => runOr404(tx, caller.tenantId, run.id));
        if (isTerminal(now.status)) throw new ApiError('conflict', `run ${run.id} already ended (${now.status})`);
        await deps.temporal.workflow.getHandle(run.id).cancel();
      }
    }
    return { status: 202, body: { run_id: run.id, status: 'cancelling' } };
  },
});

/** How long a replay may wait in the `replays` queue and run before the request gives up (a 500). */
const REPLAY_TIMEOUT_SECONDS = 5 * 60;

export const replayRun = defineOperation<{ runId: string }>({
  operationId: 'replayRun',
  method: 'post',
  path: '/v1/runs/{runId}/replay',
  tag: TAG,
  summary: "Replay a finished run's stored Temporal history against the current workflow code",
  description:
    '`deterministic: false` means the current code would take a different path on this history (a non-deterministic change); `error` says where. ' +
    `A workspace may have ${REPLAY_SLOTS_PER_TENANT} replays queued or running at once; beyond that the answer is 429 with Retry-After.`,
  access: 'key',
  params: runIdParams,
  errors: ['not_found', 'conflict', 'rate_limited'],
  responses: {
    200: {
      description: 'The replay result',
      schema: closedObject({
        run_id: { type: 'string' },
        deterministic: { type: 'boolean' },
        error: { type: ['string', 'null'] },
        event_count: { type: 'integer' },
      }),
    },
  },
  handler: async ({ params, caller, tenant, deps }) => {
    const noHistory = () => new ApiError('conflict', `run ${params.runId} has no stored history yet (it is stored once the run has ended)`);
    const workflowId = `replay-${params.runId}-${randomUUID()}`;
    // Checked here, without reading the history, so a run still running never costs a workflow; and the
    // workspace's replays in flight are bounded (a 429 beyond REPLAY_SLOTS_PER_TENANT).
    const historyStored = await tenant(async (tx) => {
      await runOr404(tx, caller.tenantId, params.runId);
      const stored = await hasRunHistory(tx, caller.tenantId, params.runId);
      if (stored) await takeReplaySlot(tx, caller.tenantId, workflowId, REPLAY_TIMEOUT_SECONDS);
      return stored;
    });
    if (!historyStored) throw noHistory();
    // The replay itself is CPU work: a worker does it (workflows/replay-run.ts) while this request waits.
    const result = await deps.temporal.workflow
      .execute<typeof replayRunWorkflow>(REPLAY_RUN_WORKFLOW_TYPE, {
        taskQueue: REPLAY_RUN_TASK_QUEUE,
        workflowId,
        args: [{ tenantId: caller.tenantId, runId: params.runId }],
        workflowExecutionTimeout: REPLAY_TIMEOUT_SECONDS * 1000,
        typedSearchAttributes: [{ key: TenantIdAttribute, value: caller.tenantId }],
        priority: tenantFairness(caller.tenantId),
      })
      .catch((err: unknown) => {
        throw failureTypeOf(err) === REPLAY_RUN_FAILURES.HistoryMissing ? noHistory() : err;
      })
      // Whatever the answer; a lease that cannot be released now expires with REPLAY_TIMEOUT_SECONDS.
      .finally(() => tenant((tx) => releaseReplaySlot(tx, caller.tenantId, workflowId)).catch(() => {}));
    return { status: 200, body: { run_id: params.runId, deterministic: result.deterministic, error: result.error, event_count: result.eventCount } };
  },
});

export default [startRun, listAgentRuns, listAllRuns, getRun, streamEvents, answerRun, cancelRun, replayRun];
