import type { Run, RunStep } from '../db/schema.js';
import type { JsonSchema } from './operation.js';
import { timestamp } from './schemas.js';

/** The run record and its steps as the API shows them, with their schemas. */

const nullableTime: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

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

export const runSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'agent_id', 'version', 'version_id', 'thread_id', 'status', 'model', 'source', 'experiment_id', 'cell_id', 'input', 'output', 'error', 'usage', 'pending_question', 'prompts', 'guardrail_trips', 'created_at', 'started_at', 'ended_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    agent_id: { type: 'string' },
    version: { type: 'integer' },
    version_id: { type: 'string' },
    thread_id: { type: 'string' },
    status: { enum: ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'] },
    model: { type: ['string', 'null'] },
    source: { type: 'string', description: '`api` for runs started through the API, `eval` for eval runs.' },
    experiment_id: { type: ['string', 'null'], description: "An eval run's experiment." },
    cell_id: { type: ['string', 'null'], description: "An eval run's cell of that experiment." },
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
        {
          type: 'object',
          required: ['id', 'question', 'asked_at'],
          additionalProperties: false,
          properties: { id: { type: 'string' }, question: { type: 'string' }, asked_at: timestamp },
        },
      ],
    },
    prompts: {
      type: 'array',
      description: 'The prompt version each node used as its system prompt.',
      items: {
        type: 'object',
        required: ['node_id', 'prompt_id', 'name', 'version'],
        additionalProperties: false,
        properties: { node_id: { type: 'string' }, prompt_id: { type: 'string' }, name: { type: 'string' }, version: { type: 'integer' } },
      },
    },
    guardrail_trips: {
      type: 'array',
      description: 'Every guardrail that tripped on this run, in order.',
      items: {
        type: 'object',
        required: ['name', 'kind', 'action', 'target', 'detail', 'at'],
        additionalProperties: false,
        properties: {
          name: { type: 'string' },
          kind: { type: 'string' },
          action: { enum: ['block', 'redact', 'warn'] },
          target: { enum: ['input', 'output'] },
          detail: { type: 'string' },
          at: timestamp,
        },
      },
    },
    created_at: timestamp,
    started_at: nullableTime,
    ended_at: nullableTime,
  },
};

export const stepSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'index', 'node_id', 'tool', 'tool_id', 'tool_call_id', 'arguments', 'status', 'result', 'error', 'started_at', 'ended_at', 'duration_ms'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    index: { type: 'integer', description: 'Position in the run, from 0.' },
    node_id: { type: 'string' },
    tool: { type: 'string', description: 'The tool name the model called.' },
    tool_id: { type: ['string', 'null'], description: 'The catalog tool, null when the model named no tool of the node.' },
    tool_call_id: { type: 'string' },
    arguments: { type: 'object' },
    status: { enum: ['running', 'completed', 'failed'] },
    result: {},
    error: { type: ['string', 'null'] },
    started_at: timestamp,
    ended_at: nullableTime,
    duration_ms: { type: ['integer', 'null'] },
  },
};


export function runJson(run: Run) {
  return {
    id: run.id,
    agent_id: run.agent_id,
    version: run.version,
    version_id: run.agent_version_id,
    thread_id: run.thread_id,
    status: run.status,
    model: run.model,
    source: run.source,
    experiment_id: run.experiment_id,
    cell_id: run.cell_id,
    input: run.input,
    output: run.output,
    error: run.error,
    usage: {
      prompt_tokens: run.prompt_tokens,
      completion_tokens: run.completion_tokens,
      total_tokens: run.total_tokens,
      cost_usd: run.cost_usd,
      duration_ms: run.duration_ms,
    },
    pending_question: run.pending_question,
    prompts: run.prompts,
    guardrail_trips: run.guardrail_trips,
    created_at: run.created_at.toISOString(),
    started_at: run.started_at?.toISOString() ?? null,
    ended_at: run.ended_at?.toISOString() ?? null,
  };
}

export function stepJson(step: RunStep) {
  return {
    id: step.id,
    index: step.index,
    node_id: step.node_id,
    tool: step.tool,
    tool_id: step.tool_id,
    tool_call_id: step.tool_call_id,
    arguments: step.arguments,
    status: step.status,
    result: step.result ?? null,
    error: step.error,
    started_at: step.started_at.toISOString(),
    ended_at: step.ended_at?.toISOString() ?? null,
    duration_ms: step.duration_ms,
  };
}
