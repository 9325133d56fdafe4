import { Decimal } from 'decimal.js';
import { findAgent } from '../../db/agents.js';
import type { PageQuery } from '../../db/page.js';
import { listRunsByIds } from '../../db/runs.js';
import type { Run, VoiceCall, VoiceCallTurn } from '../../db/schema.js';
import { listCallTurns } from '../../db/voice-call-turns.js';
import { findCall, listCallsPage } from '../../db/voice-calls.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { pick } from '../row-json.js';
import { usageSchema } from '../run-json.js';
import { closedObject, listOf, nullableTimestamp, pageQuery, pathParams, timestamp } from '../schemas.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Voice';
const callOr404 = refOr404(findCall, 'call');

const callSchema = closedObject({
  id: { type: 'string' },
  agent_id: { type: 'string' },
  channel_id: { type: 'string', description: 'The voice channel the call came through.' },
  provider_call_id: { type: 'string', description: "The telephony provider's id of the call (`call_id` of its events)." },
  direction: { enum: ['inbound', 'outbound'] },
  from: { type: 'string' },
  to: { type: 'string' },
  thread_id: { type: ['string', 'null'], description: "The thread its turns' runs continue; null until the first turn." },
  started_at: { ...timestamp, description: 'When its first event arrived.' },
  ended_at: { ...nullableTimestamp, description: 'When its `call.ended` event arrived; null while it goes on.' },
  duration_seconds: { type: ['integer', 'null'], description: 'As the provider reported it with `call.ended`.' },
});

const callUsageSchema = closedObject(
  {
    prompt_tokens: { type: ['integer', 'null'] },
    completion_tokens: { type: ['integer', 'null'] },
    total_tokens: { type: ['integer', 'null'] },
    cost_usd: { type: ['string', 'null'], pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'Exact decimal string.' },
  },
);

const callDetailSchema = closedObject({
  ...(callSchema.properties as Record<string, JsonSchema>),
  turns: {
    type: 'array',
    description: "The transcript in order: each caller turn, then the agent's reply (the output of the run that turn started) once that run has completed.",
    items: closedObject({
      role: { enum: ['caller', 'agent'] },
      text: { type: 'string' },
      at: timestamp,
      run_id: { type: 'string', description: 'The run the caller turn started, or that made the reply.' },
      confidence: { type: ['number', 'null'], description: "The speech-to-text's confidence in a caller turn, when it gave one." },
    }),
  },
  runs: {
    type: 'array',
    description: 'The runs its turns started, in order.',
    items: closedObject({ id: { type: 'string' }, status: { enum: ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'] }, usage: usageSchema }),
  },
  usage: {
    ...callUsageSchema,
    description: "Sums over its runs (their subagents' included). null means unknown: a run is still going or its provider reported no usage.",
  },
});

function callJson(call: VoiceCall) {
  return {
    ...pick(call, ['id', 'agent_id', 'channel_id', 'provider_call_id', 'direction']),
    from: call.from_number,
    to: call.to_number,
    thread_id: call.thread_id,
    started_at: isoTimestamp(call.started_at),
    ended_at: isoTimestampOrNull(call.ended_at),
    duration_seconds: call.duration_seconds,
  };
}

function transcript(turns: VoiceCallTurn[], runs: Map<string, Run>) {
  return turns.flatMap((turn) => {
    const caller = { role: 'caller', text: turn.text, at: isoTimestamp(turn.created_at), run_id: turn.run_id!, confidence: turn.confidence };
    const run = turn.run_id ? runs.get(turn.run_id) : undefined;
    if (run?.status !== 'completed' || run.output === null) return [caller];
    return [caller, { role: 'agent', text: run.output, at: isoTimestamp(run.ended_at ?? run.created_at), run_id: run.id, confidence: null }];
  });
}

/** The sums of the runs' usage; a count or cost any run lacks makes that sum unknown (null), not smaller. */
function callUsage(runs: Run[]) {
  const sum = (values: Array<number | null>) => (values.some((value) => value === null) ? null : values.reduce<number>((total, value) => total + value!, 0));
  const costs = runs.map((run) => run.cost_usd);
  return {
    prompt_tokens: sum(runs.map((run) => run.prompt_tokens)),
    completion_tokens: sum(runs.map((run) => run.completion_tokens)),
    total_tokens: sum(runs.map((run) => run.total_tokens)),
    cost_usd: costs.some((cost) => cost === null) ? null : costs.reduce<Decimal>((total, cost) => total.plus(cost!), new Decimal(0)).toFixed(),
  };
}

type CallListQuery = PageQuery & { agent?: string; started_after?: string; started_before?: string };

export const listVoiceCalls = defineOperation<Record<string, never>, CallListQuery>({
  operationId: 'listVoiceCalls',
  method: 'get',
  path: '/v1/voice/calls',
  tag: TAG,
  summary: "The workspace's calls, most recent first (GET one for its transcript, runs and cost)",
  access: 'key',
  query: {
    ...pageQuery,
    properties: {
      ...(pageQuery.properties as object),
      agent: { type: 'string', minLength: 1, description: "Only this agent's calls (id or name); one that names no agent gives an empty list." },
      started_after: { type: 'string', format: 'date-time', description: 'Only calls that started at or after this time (RFC 3339).' },
      started_before: { type: 'string', format: 'date-time', description: 'Only calls that started before this time (RFC 3339).' },
    },
  },
  responses: { 200: { description: 'A page of calls', schema: listOf('calls', callSchema) } },
  handler: async ({ query, caller, tenantReads }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const agent = query.agent ? await findAgent(reader, caller.tenantId, query.agent) : undefined;
      if (query.agent && !agent) return { items: [], nextCursor: null };
      const filter = {
        agentId: agent?.id,
        startedAfter: query.started_after ? new Date(query.started_after) : undefined,
        startedBefore: query.started_before ? new Date(query.started_before) : undefined,
      };
      return listCallsPage(reader, caller.tenantId, filter, query);
    });
    return { status: 200, body: { calls: items.map(callJson), next_cursor: nextCursor } };
  },
});

export const getVoiceCall = defineOperation<{ id: string }>({
  operationId: 'getVoiceCall',
  method: 'get',
  path: '/v1/voice/calls/{id}',
  tag: TAG,
  summary: 'A call with its transcript, the runs its turns made, and its usage and exact cost',
  access: 'key',
  params: pathParams(['id'], 200),
  errors: ['not_found'],
  responses: { 200: { description: 'The call', schema: closedObject({ call: callDetailSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const { call, turns, runs } = await tenantReads(async (reader) => {
      const call = await callOr404(reader, caller.tenantId, params.id);
      const turns = await listCallTurns(reader, caller.tenantId, call.id);
      const runs = await listRunsByIds(reader, caller.tenantId, turns.flatMap((turn) => (turn.run_id ? [turn.run_id] : [])));
      return { call, turns, runs };
    });
    const byId = new Map(runs.map((run) => [run.id, run]));
    return {
      status: 200,
      body: {
        call: {
          ...callJson(call),
          turns: transcript(turns, byId),
          runs: runs.map((run) => ({ ...pick(run, ['id', 'status']), usage: pick(run, ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'duration_ms']) })),
          usage: callUsage(runs),
        },
      },
    };
  },
});

export default [listVoiceCalls, getVoiceCall];
