import { sql } from 'kysely';
import { notFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { listOf, page, timestamp } from '../schemas.js';
import { findAgent } from './agents.js';

const TAG = 'Threads';

const agentQuery = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['agent'],
  additionalProperties: false,
  properties: { agent: { type: 'string', minLength: 1, description: 'The agent (id or name) the thread belongs to.' }, ...extra },
});

const summarySchema: JsonSchema = {
  type: 'object',
  required: ['thread_id', 'title', 'created_at', 'updated_at', 'run_count'],
  additionalProperties: false,
  properties: { thread_id: { type: 'string' }, title: { type: 'string' }, created_at: timestamp, updated_at: timestamp, run_count: { type: 'integer' } },
};

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
    cursor: { type: 'string', minLength: 1, description: 'The `next_cursor` of the previous page.' },
  }),
  errors: ['not_found'],
  responses: { 200: { description: 'A page of thread summaries', schema: listOf('threads', summarySchema) } },
  handler: async ({ query, caller, tenant }) => {
    const rows = await tenant(async (tx) => {
      const agent = await findAgent(tx, caller.tenantId, query.agent);
      let q = tx
        .selectFrom('threads')
        .select(['threads.id', 'threads.title', 'threads.created_at', 'threads.updated_at'])
        .select((eb) => eb.selectFrom('runs').select(eb.fn.countAll<number>().as('n')).whereRef('runs.thread_id', '=', 'threads.id').as('run_count'))
        .where('threads.tenant_id', '=', caller.tenantId)
        .where('threads.agent_id', '=', agent.id)
        .orderBy('threads.updated_at', 'desc')
        .orderBy('threads.id', 'desc')
        .limit(query.limit + 1);
      if (query.cursor) {
        // The cursor is the last thread of the previous page; continue strictly after it in (updated_at, id) order.
        const after = await tx.selectFrom('threads').select(['updated_at', 'id']).where('id', '=', query.cursor).executeTakeFirst();
        if (after) q = q.where(sql<boolean>`(threads.updated_at, threads.id) < (${after.updated_at}, ${after.id})`);
      }
      return q.execute();
    });
    const { items, nextCursor } = page(rows, query.limit);
    return {
      status: 200,
      body: {
        threads: items.map((t) => ({
          thread_id: t.id,
          title: t.title,
          created_at: t.created_at.toISOString(),
          updated_at: t.updated_at.toISOString(),
          run_count: Number(t.run_count ?? 0),
        })),
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
  params: { type: 'object', required: ['threadId'], properties: { threadId: { type: 'string', minLength: 1 } } },
  query: agentQuery(),
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The thread',
      schema: {
        type: 'object',
        required: ['thread_id', 'agent_id', 'title', 'turns'],
        additionalProperties: false,
        properties: { thread_id: { type: 'string' }, agent_id: { type: 'string' }, title: { type: 'string' }, turns: { type: 'array', items: turnSchema } },
      },
    },
  },
  handler: async ({ params, query, caller, tenant }) => {
    const { thread, runs } = await tenant(async (tx) => {
      const agent = await findAgent(tx, caller.tenantId, query.agent);
      const thread = await tx
        .selectFrom('threads')
        .selectAll()
        .where('id', '=', params.threadId)
        .where('agent_id', '=', agent.id)
        .where('tenant_id', '=', caller.tenantId)
        .executeTakeFirst();
      if (!thread) throw notFound('thread', params.threadId);
      const runs = await tx
        .selectFrom('runs')
        .select(['id', 'input', 'output', 'status', 'created_at'])
        .where('thread_id', '=', thread.id)
        .where('tenant_id', '=', caller.tenantId)
        .orderBy('id')
        .execute();
      return { thread, runs };
    });
    return {
      status: 200,
      body: {
        thread_id: thread.id,
        agent_id: thread.agent_id,
        title: thread.title,
        turns: runs.map((r) => ({ run_id: r.id, input: r.input, output: r.output, status: r.status, created_at: r.created_at.toISOString() })),
      },
    };
  },
});

export default [listThreads, getThread];
