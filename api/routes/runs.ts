import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { agentOr404 } from './agents.js';
import type { PageQuery } from '../../db/page.js';
import { hasRunHistory } from '../../db/run-histories.js';
import { listRunSteps } from '../../db/run-steps.js';
import { createQueuedRun, findRun, isTerminal, listRunsPage } from '../../db/runs.js';
import { answerUpdate } from '../../workflows/agent-run-api.js';
import { failureTypeOf } from '../../workflows/failures.js';
import { REPLAY_RUN_FAILURES, REPLAY_RUN_TASK_QUEUE, REPLAY_RUN_WORKFLOW_TYPE } from '../../workflows/replay-run-api.js';
import type { replayRun as replayRunWorkflow } from '../../workflows/replay-run.js';
import { ApiError, notFound, orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema, type OperationContext } from '../operation.js';
import { takeRateLimitToken, RUN_RATE_LIMIT } from '../rate-limit.js';
import { runJson, runSchema, stepJson, stepSchema } from '../run-json.js';
import { listOf, refParams } from '../schemas.js';
import { SSE_HEADERS, streamRunEvents } from '../sse.js';
import { startAgentRunWorkflow } from '../start-agent-run-workflow.js';
import { TenantIdAttribute } from '../../workflows/search-attributes.js';

const TAG = 'Runs';

const eventStream = {
  description:
    'Server-Sent Events: one frame per run event (`id: <seq>`, `event: <type>`, `data: <JSON>`), `: ping` comments every 15 s. ' +
    'The stream ends after `run.completed`, `run.failed` or `run.cancelled`, or at `run.paused` while the run waits for an answer.',
  contentType: 'text/event-stream',
  schema: { type: 'string' },
};

const runIdParams: JsonSchema = { type: 'object', required: ['runId'], properties: { runId: { type: 'string', minLength: 1 } } };

export const startRun = defineOperation<{ id: string }, unknown, { input: string; thread_id?: string }>({
  operationId: 'startRun',
  method: 'post',
  path: '/v1/agents/{id}/runs',
  tag: 'Agents',
  summary: "Run the agent's published version; answers the run's event stream",
  description: 'Without `thread_id` the run starts a new thread (its id is in `run.created`); with one, it continues that thread. Limited to 60 requests per 60 s per API key.',
  access: 'key',
  params: refParams,
  body: {
    type: 'object',
    required: ['input'],
    additionalProperties: false,
    properties: { input: { type: 'string', minLength: 1, maxLength: 200_000 }, thread_id: { type: 'string', minLength: 1 } },
  },
  errors: ['not_found', 'conflict', 'rate_limited'],
  responses: { 200: eventStream },
  handler: async ({ params, body, caller, tenant, deps, koa }) => {
    // Counted in a transaction of its own, so refused requests count too.
    const rateHeaders = await tenant((tx) => takeRateLimitToken(tx, caller.tenantId, caller.keyId, RUN_RATE_LIMIT));
    const run = await tenant(async (tx) => {
      const agent = await agentOr404(tx, caller.tenantId, params.id);
      const newRun = { tenantId: caller.tenantId, agentId: agent.id, input: body.input, threadId: body.thread_id, source: 'api' as const };
      const queued = await createQueuedRun(tx, newRun);
      if (queued.queued) return { ...newRun, runId: queued.runId, threadId: queued.threadId };
      if (queued.reason === 'unknown_thread') throw notFound('thread', body.thread_id!);
      throw new ApiError('conflict', 'the agent has no published version; POST /v1/agents/{id}/versions first');
    });
    await startAgentRunWorkflow(deps.temporal, run);
    const reply = streamRunEvents(koa, deps, caller.tenantId, run.runId, 0);
    return { ...reply, headers: { ...SSE_HEADERS, ...rateHeaders } };
  },
});

export const streamEvents = defineOperation<{ runId: string }, { after?: number }>({
  operationId: 'streamRunEvents',
  method: 'get',
  path: '/v1/runs/{runId}/events',
  tag: TAG,
  summary: "Stream a live or finished run's events, resuming after Last-Event-ID",
  description: 'Replays the persisted trace from the start, or after the `Last-Event-ID` header (or `after` query) sequence number, then follows the run live.',
  access: 'key',
  params: runIdParams,
  query: { type: 'object', additionalProperties: false, properties: { after: { type: 'integer', minimum: 0 } } },
  errors: ['not_found'],
  responses: { 200: eventStream },
  handler: async ({ params, query, caller, tenant, deps, koa }) => {
    orNotFound(await tenant((tx) => findRun(tx, caller.tenantId, params.runId)), 'run', params.runId);
    const lastEventId = koa.get('Last-Event-ID');
    const after = /^\d+$/.test(lastEventId) ? Number(lastEventId) : (query.after ?? 0);
    return streamRunEvents(koa, deps, caller.tenantId, params.runId, after);
  },
});

export const getRun = defineOperation<{ runId: string }>({
  operationId: 'getRun',
  method: 'get',
  path: '/v1/runs/{runId}',
  tag: TAG,
  summary: 'A run with its steps (the tool-call trace) in order',
  access: 'key',
  params: runIdParams,
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The run and its steps',
      schema: {
        type: 'object',
        required: ['run', 'steps'],
        additionalProperties: false,
        properties: { run: runSchema, steps: { type: 'array', items: stepSchema } },
      },
    },
  },
  handler: async ({ params, caller, tenant }) => {
    const { run, steps } = await tenant(async (tx) => ({
      run: orNotFound(await findRun(tx, caller.tenantId, params.runId), 'run', params.runId),
      steps: await listRunSteps(tx, caller.tenantId, params.runId),
    }));
    return { status: 200, body: { run: runJson(run), steps: steps.map(stepJson) } };
  },
});

type RunListQuery = PageQuery & { agent?: string; source?: 'api' | 'eval' | 'all' };

function runListQuery(withAgentFilter: boolean): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      cursor: { type: 'string', minLength: 1 },
      ...(withAgentFilter && { agent: { type: 'string', minLength: 1, description: 'Only runs of this agent (id or name).' } }),
      source: {
        enum: ['api', 'eval', 'all'],
        description: 'Only runs from this source. By default eval runs are left out; `all` includes them.',
      },
    },
  };
}

async function listRuns({ query, caller, tenant }: OperationContext<unknown, RunListQuery, unknown>, agentRef?: string) {
  const { items, nextCursor } = await tenant(async (tx) => {
    const ref = agentRef ?? query.agent;
    const agentId = ref ? (await agentOr404(tx, caller.tenantId, ref)).id : undefined;
    return listRunsPage(tx, caller.tenantId, { agentId, source: query.source }, query);
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
  errors: ['not_found'],
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
  description: 'Each question takes one answer: a second one, or an answer to a run that is not paused, is 409. Follow the rest with GET /v1/runs/{runId}/events.',
  access: 'key',
  params: runIdParams,
  body: {
    type: 'object',
    required: ['answer'],
    additionalProperties: false,
    properties: { answer: { type: 'string', maxLength: 200_000 }, question_id: { type: 'string', minLength: 1 } },
  },
  errors: ['not_found', 'conflict'],
  responses: {
    200: {
      description: 'Accepted; the run is running again',
      schema: {
        type: 'object',
        required: ['run_id', 'question_id', 'status'],
        additionalProperties: false,
        properties: { run_id: { type: 'string' }, question_id: { type: 'string' }, status: { const: 'running' } },
      },
    },
  },
  handler: async ({ params, body, caller, tenant, deps }) => {
    const run = orNotFound(await tenant((tx) => findRun(tx, caller.tenantId, params.runId)), 'run', params.runId);
    if (run.status !== 'paused') throw new ApiError('conflict', `run ${run.id} is ${run.status}, not waiting for an answer`);
    try {
      const { questionId } = await deps.temporal.workflow
        .getHandle(run.id)
        .executeUpdate(answerUpdate, { args: [{ answer: body.answer, questionId: body.question_id }] });
      return { status: 200, body: { run_id: run.id, question_id: questionId, status: 'running' } };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw new ApiError('conflict', (err.cause as Error | undefined)?.message ?? err.message);
      throw err;
    }
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
      schema: {
        type: 'object',
        required: ['run_id', 'status'],
        additionalProperties: false,
        properties: { run_id: { type: 'string' }, status: { const: 'cancelling' } },
      },
    },
  },
  handler: async ({ params, caller, tenant, deps }) => {
    const run = orNotFound(await tenant((tx) => findRun(tx, caller.tenantId, params.runId)), 'run', params.runId);
    if (isTerminal(run.status)) throw new ApiError('conflict', `run ${run.id} already ended (${run.status})`);
    await deps.temporal.workflow.getHandle(run.id).cancel();
    return { status: 202, body: { run_id: run.id, status: 'cancelling' } };
  },
});

/** How long a replay may wait in the `replays` queue and run before the request gives up (a 500). */
const REPLAY_TIMEOUT = '5 minutes';

export const replayRun = defineOperation<{ runId: string }>({
  operationId: 'replayRun',
  method: 'post',
  path: '/v1/runs/{runId}/replay',
  tag: TAG,
  summary: "Replay a finished run's stored Temporal history against the current workflow code",
  description: '`deterministic: false` means the current code would take a different path on this history (a non-deterministic change); `error` says where.',
  access: 'key',
  params: runIdParams,
  errors: ['not_found', 'conflict'],
  responses: {
    200: {
      description: 'The replay result',
      schema: {
        type: 'object',
        required: ['run_id', 'deterministic', 'error', 'event_count'],
        additionalProperties: false,
        properties: {
          run_id: { type: 'string' },
          deterministic: { type: 'boolean' },
          error: { type: ['string', 'null'] },
          event_count: { type: 'integer' },
        },
      },
    },
  },
  handler: async ({ params, caller, tenant, deps }) => {
    const noHistory = () => new ApiError('conflict', `run ${params.runId} has no stored history yet (it is stored once the run has ended)`);
    // Checked here, without reading the history, so a run still running never costs a workflow.
    const historyStored = await tenant(async (tx) => {
      orNotFound(await findRun(tx, caller.tenantId, params.runId), 'run', params.runId);
      return hasRunHistory(tx, caller.tenantId, params.runId);
    });
    if (!historyStored) throw noHistory();
    // The replay itself is CPU work: a worker does it (workflows/replay-run.ts) while this request waits.
    const result = await deps.temporal.workflow
      .execute<typeof replayRunWorkflow>(REPLAY_RUN_WORKFLOW_TYPE, {
        taskQueue: REPLAY_RUN_TASK_QUEUE,
        workflowId: `replay-${params.runId}-${randomUUID()}`,
        args: [{ tenantId: caller.tenantId, runId: params.runId }],
        workflowExecutionTimeout: REPLAY_TIMEOUT,
        typedSearchAttributes: [{ key: TenantIdAttribute, value: caller.tenantId }],
      })
      .catch((err: unknown) => {
        throw failureTypeOf(err) === REPLAY_RUN_FAILURES.HistoryMissing ? noHistory() : err;
      });
    return { status: 200, body: { run_id: params.runId, deterministic: result.deterministic, error: result.error, event_count: result.eventCount } };
  },
});

export default [startRun, listAgentRuns, listAllRuns, getRun, streamEvents, answerRun, cancelRun, replayRun];
