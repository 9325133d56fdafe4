import type { JsonSchema } from '../json-schema/types.js';

/**
 * The built-in tools a catalog entry of kind `builtin` can name, with what the model is told about each.
 * `runsIn` says who executes it: the workflow itself (it changes run state: pauses, timers, the plan),
 * an activity (it does I/O), or nobody yet (the capability ships with a later issue; a call gets a tool
 * error saying so).
 */
export const BUILTIN_TOOLS = {
  calculator: {
    runsIn: 'activity',
    description: 'Evaluate an arithmetic expression, e.g. "(2 + 3) * sqrt(16)". Supports + - * / % ^, parentheses, pi, e, and sqrt, abs, floor, ceil, round, min, max, pow, log, log10, exp, sin, cos, tan.',
    parameters: object({ expression: { type: 'string', description: 'The expression to evaluate.' } }, ['expression']),
  },
  ask_human: {
    runsIn: 'workflow',
    description: 'Ask a person a question and wait for the answer. The run pauses until someone answers.',
    parameters: object({ question: { type: 'string', description: 'The question to ask.' } }, ['question']),
  },
  wait_until: {
    runsIn: 'workflow',
    description: 'Wait durably until a moment ("until", ISO 8601 date-time) or for a duration ("duration", e.g. "30s", "5m", "2h", or ISO 8601 like "PT5M").',
    parameters: object({ until: { type: 'string' }, duration: { type: 'string' } }, []),
  },
  plan_write: {
    runsIn: 'workflow',
    description: 'Write (replace) the plan: an ordered list of steps, each with a title and whether it is done.',
    parameters: object(
      {
        steps: {
          type: 'array',
          items: object({ title: { type: 'string' }, done: { type: 'boolean' } }, ['title']),
        },
      },
      ['steps'],
    ),
  },
  verify_plan: {
    runsIn: 'workflow',
    description: 'Report the plan: which steps are done, which are pending, and whether all are done.',
    parameters: object({}, []),
  },
  knowledge_search: {
    runsIn: 'activity',
    description: 'Search the knowledge bases for the passages most relevant to a query (optionally one knowledge base, "kb").',
    parameters: object({ query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 50 }, kb: { type: 'string' } }, ['query']),
  },
  memory_search: {
    runsIn: 'activity',
    description: 'Search long-term memory for entries matching a query.',
    parameters: object({ query: { type: 'string' }, k: { type: 'integer' } }, ['query']),
  },
  memory_write: {
    runsIn: 'activity',
    description: 'Store a fact in long-term memory.',
    parameters: object({ content: { type: 'string' } }, ['content']),
  },
  list_skills: {
    runsIn: 'unavailable',
    description: 'List the skills this agent can use.',
    parameters: object({}, []),
  },
  use_skill: {
    runsIn: 'unavailable',
    description: 'Load a skill by name.',
    parameters: object({ name: { type: 'string' } }, ['name']),
  },
} as const satisfies Record<string, { runsIn: 'workflow' | 'activity' | 'unavailable'; description: string; parameters: JsonSchema }>;

export type BuiltinKey = keyof typeof BUILTIN_TOOLS;
export const BUILTIN_KEYS = Object.keys(BUILTIN_TOOLS) as BuiltinKey[];

export function isBuiltinKey(key: string): key is BuiltinKey {
  return Object.hasOwn(BUILTIN_TOOLS, key);
}

function object(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}
