import { agentOr404 } from './agents.js';
import { listThreadRuns } from '../../db/runs.js';
import { findThread, listThreadsPage, parseThreadCursor, THREAD_CURSOR_PATTERN } from '../../db/threads.js';
import { orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { timestampsJson } from '../row-json.js';
import { closedObject, listOf, pathParams, timestamp } from '../schemas.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Threads';

const agentQuery = (extra: Record<string, JsonSchema> = {}): JsonSchema =>
  closedObject({ agent: { type: 'string', minLength: 1, description: 'The agent (id or name) the thread belongs to.' }, ...extra }, { required: ['agent'] });

const summarySchema = closedObject({ thread_id: { type: 'string' }, title: { type: 'string' }, created_at: timestamp, updated_at: timestamp, run_count: { type: 'integer' } });

const turnSchema: JsonSchema = {
  type: 'object',
  required: ['run_id', 'input', 'output', 'status', 'created_at'],
  additionalProperties: false,
  description: 'One run of the thread: what was asked and what the agent answered.',
  properties: {
    run_id: { type: 'string' },
    input: { type: 'string' },
    output: { type: ['string', 'null'] },
    status: { type: 'string' },
    created_at: timestamp,
  },
};

export const listThreads = defineOperation<Record<string, never>, { agent: string; limit: number; cursor?: string }>({
  operationId: 'listThreads',
  method: 'get',
  path: '/v1/threads',
  tag: TAG,
  summary: "The agent's threads, most recently active first",
  access: 'key',
  query: agentQuery({
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', pattern: THREAD_CURSOR_PATTERN, description: 'The `next_cursor` of the previous page: where it ended in order of activity.' },
  }),
  errors: ['not_found'],
  responses: { 200: { description: 'A page of thread summaries', schema: listOf('threads', summarySchema) } },
  handler: async ({ query, caller, tenantReads }) => {
    // The schema's pattern has checked the cursor's form.
    const after = query.cursor === undefined ? undefined : parseThreadCursor(query.cursor);
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const agent = await agentOr404(reader, caller.tenantId, query.agent);
      return listThreadsPage(reader, caller.tenantId, agent.id, { limit: query.limit, after });
    });
    return {
      status: 200,
      body: {
        threads: items.map((t) => ({ thread_id: t.id, title: t.title, ...timestampsJson(t), run_count: t.run_count })),
        next_cursor: nextCursor,
      },
    };
  },
});

export const getThread = defineOperation<{ threadId: string }, { agent: string }>({
  operationId: 'getThread',
  method: 'get',
  path: '/v1/threads/{threadId}',
  tag: TAG,
  summary: "A thread's turns, oldest first",
  access: 'key',
  params: pathParams(['threadId']),
  query: agentQuery(),
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The thread',
      schema: closedObject({ thread_id: { type: 'string' }, agent_id: { type: 'string' }, title: { type: 'string' }, turns: { type: 'array', items: turnSchema } }),
    },
  },
  handler: async ({ params, query, caller, tenantReads }) => {
    const { thread, runs } = await tenantReads(async (reader) => {
      const agent = await agentOr404(reader, caller.tenantId, query.agent);
      const thread = orNotFound(await findThread(reader, caller.tenantId, agent.id, params.threadId), 'thread', params.threadId);
      return { thread, runs: await listThreadRuns(reader, caller.tenantId, thread.id) };
    });
    return {
      status: 200,
      body: {
        thread_id: thread.id,
        agent_id: thread.agent_id,
        title: thread.title,
        turns: runs.map((r) => ({ run_id: r.id, input: r.input, output: r.output, status: r.status, created_at: isoTimestamp(r.created_at) })),
      },
    };
  },
});

export default [listThreads, getThread];
