import type { Run, RunStep } from '../db/schema.js';
import type { JsonSchema } from './operation.js';
import { pick } from './row-json.js';
import { closedObject, nullableTimestamp, timestamp } from './schemas.js';
import { isoTimestamp, isoTimestampOrNull } from './iso-timestamp.js';

/** The run record and its steps as the API shows them, with their schemas. */

export const usageSchema: JsonSchema = {
  type: 'object',
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'duration_ms'],
  additionalProperties: false,
  description: 'Sums over the model turns. null means unknown (a provider reported no usage), which is not zero.',
  properties: {
    prompt_tokens: { type: ['integer', 'null'] },
    completion_tokens: { type: ['integer', 'null'] },
    total_tokens: { type: ['integer', 'null'] },
    cost_usd: { type: ['string', 'null'], pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'Exact decimal string.' },
    duration_ms: { type: ['integer', 'null'] },
  },
};

export const runSchema = closedObject({
  id: { type: 'string' },
  agent_id: { type: 'string' },
  version: { type: 'integer' },
  version_id: { type: 'string' },
  thread_id: { type: 'string' },
  status: { enum: ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'] },
  model: { type: ['string', 'null'] },
  source: { type: 'string', description: '`api` for runs started through the API, `eval` for eval runs, `schedule` for runs a schedule fired, `channel` for runs an inbound channel started, `deployment` for runs a deployment\'s publishable key started.' },
  experiment_id: { type: ['string', 'null'], description: "An eval run's experiment." },
  cell_id: { type: ['string', 'null'], description: "An eval run's cell of that experiment." },
  parent_run_id: { type: ['string', 'null'], description: "A subagent's run: the run whose tool call started it (docs/subagents.md)." },
  depth: { type: 'integer', minimum: 0, description: 'How many subagent levels below the run a client started: 0 for that run.' },
  schedule_id: { type: ['string', 'null'], description: 'A scheduled run: the schedule that fired it (docs/schedules.md).' },
  channel_id: { type: ['string', 'null'], description: 'A run an inbound channel started: that channel (docs/channels.md).' },
  deployment_id: { type: ['string', 'null'], description: "A run a deployment's publishable key started: that deployment (docs/deployments.md)." },
  input: { type: 'string' },
  output: { type: ['string', 'null'] },
  error: {
    anyOf: [
      { type: 'null' },
      { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
    ],
  },
  usage: usageSchema,
  pending_question: {
    anyOf: [
      { type: 'null' },
      closedObject({ id: { type: 'string' }, question: { type: 'string' }, asked_at: timestamp }),
    ],
  },
  prompts: {
    type: 'array',
    description: 'The prompt version each node used as its system prompt.',
    items: closedObject({ node_id: { type: 'string' }, prompt_id: { type: 'string' }, name: { type: 'string' }, version: { type: 'integer' } }),
  },
  skills: {
    type: 'array',
    description: 'The skill versions the run loaded (`use_skill`), in order: one entry per node and skill version (docs/skills.md).',
    items: closedObject({ node_id: { type: 'string' }, skill_id: { type: 'string' }, name: { type: 'string' }, version: { type: 'integer' } }),
  },
  guardrail_trips: {
    type: 'array',
    description: 'Every guardrail that tripped on this run, in order.',
    items: closedObject({
      name: { type: 'string' },
      kind: { type: 'string' },
      action: { enum: ['block', 'redact', 'warn'] },
      target: { enum: ['input', 'output'] },
      detail: { type: 'string' },
      at: timestamp,
    }),
  },
  created_at: timestamp,
  started_at: nullableTimestamp,
  ended_at: nullableTimestamp,
});

export const stepSchema = closedObject({
  id: { type: 'string' },
  index: { type: 'integer', description: 'Position in the run, from 0.' },
  node_id: { type: 'string' },
  tool: { type: 'string', description: 'The tool name the model called.' },
  tool_id: {
    type: ['string', 'null'],
    description: 'The catalog tool; null when the model named no tool of the node, or for `list_skills`/`use_skill` offered to a node with skills (docs/skills.md).',
  },
  tool_call_id: { type: 'string' },
  arguments: { type: 'object' },
  status: { enum: ['running', 'completed', 'failed'] },
  result: {},
  error: { type: ['string', 'null'] },
  started_at: timestamp,
  ended_at: nullableTimestamp,
  duration_ms: { type: ['integer', 'null'] },
});

export function runJson(run: Run) {
  return {
    ...pick(run, ['id', 'agent_id', 'version']),
    version_id: run.agent_version_id,
    ...pick(run, ['thread_id', 'status', 'model', 'source', 'experiment_id', 'cell_id']),
    parent_run_id: run.parent_run_id ?? null,
    depth: run.depth ?? 0,
    schedule_id: run.schedule_id ?? null,
    channel_id: run.channel_id ?? null,
    deployment_id: run.deployment_id ?? null,
    ...pick(run, ['input', 'output', 'error']),
    usage: pick(run, ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'duration_ms']),
    ...pick(run, ['pending_question', 'prompts', 'skills', 'guardrail_trips']),
    created_at: isoTimestamp(run.created_at),
    started_at: isoTimestampOrNull(run.started_at),
    ended_at: isoTimestampOrNull(run.ended_at),
  };
}

export function stepJson(step: RunStep) {
  return {
    ...pick(step, ['id', 'index', 'node_id', 'tool', 'tool_id', 'tool_call_id', 'arguments', 'status']),
    result: step.result ?? null,
    error: step.error,
    started_at: isoTimestamp(step.started_at),
    ended_at: isoTimestampOrNull(step.ended_at),
    duration_ms: step.duration_ms,
  };
}
