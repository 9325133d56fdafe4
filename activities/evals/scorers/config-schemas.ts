import { scriptTurn } from '../../guardrails/config-schemas.js';
import { MAX_REQUEST_INTEGER, type JsonSchema } from '../../json-schema/types.js';
import type { ScriptTurn } from '../../models/types.js';
import { SCORER_TYPES, type ScorerConfig, type ScorerType } from './types.js';

/**
 * The config of each scorer type: a JSON Schema (2020-12, clean under ajv `strict: true`, no `default`
 * keywords so that `useDefaults` never writes into a stored config) and the matching type. Defaults are
 * applied when scoring. What a schema cannot say (a pattern that compiles and is safe, a judge model
 * that exists) is checked by `scorerConfigProblems` (validate.ts).
 */

export const MAX_SCORERS = 20;
export const MAX_REGEX_PATTERN_LENGTH = 1000;
export const MAX_RUBRIC_LENGTH = 8000;

/** What `threshold` is when a scorer sets none. */
export const DEFAULT_THRESHOLDS: Readonly<Record<ScorerType, number>> = {
  exact: 1,
  contains: 1,
  regex: 1,
  json_schema: 1,
  json_match: 1,
  numeric: 1,
  semantic_similarity: 0.8,
  llm_judge: 0.5,
  tool_called: 1,
  cost_max: 1,
  latency_max: 1,
};

export function thresholdOf(config: ScorerConfig): number {
  return config.threshold ?? DEFAULT_THRESHOLDS[config.type];
}

export interface ExactConfig extends ScorerConfig {
  type: 'exact';
  case_sensitive?: boolean;
  trim?: boolean;
}

export interface ContainsConfig extends ScorerConfig {
  type: 'contains';
  value?: string | string[];
  case_sensitive?: boolean;
}

export interface RegexConfig extends ScorerConfig {
  type: 'regex';
  pattern: string;
  flags?: string;
}

export interface JsonSchemaConfig extends ScorerConfig {
  type: 'json_schema';
  schema: JsonSchema;
}

export interface JsonMatchConfig extends ScorerConfig {
  type: 'json_match';
  expected?: Record<string, unknown>;
}

export interface NumericConfig extends ScorerConfig {
  type: 'numeric';
  tolerance?: number;
  relative_tolerance?: number;
}

export interface SemanticSimilarityConfig extends ScorerConfig {
  type: 'semantic_similarity';
}

export interface LlmJudgeConfig extends ScorerConfig {
  type: 'llm_judge';
  model: string;
  rubric: string;
  script?: ScriptTurn[];
}

export interface ToolCalledConfig extends ScorerConfig {
  type: 'tool_called';
  tools: string[];
  ordered?: boolean;
}

export interface CostMaxConfig extends ScorerConfig {
  type: 'cost_max';
  max_usd: string | number;
}

export interface LatencyMaxConfig extends ScorerConfig {
  type: 'latency_max';
  max_ms: number;
}

/** The fields every scorer has, and its own beside them. */
function scorerSchema(type: ScorerType, description: string, own: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  const defaultThreshold = DEFAULT_THRESHOLDS[type];
  return {
    type: 'object',
    description,
    required: ['type', ...required],
    additionalProperties: false,
    properties: {
      type: { const: type },
      name: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_.-]+$',
        description: 'The key of its score in a cell\'s `scores`; default: the type. Unique among a case\'s scorers.',
      },
      threshold: {
        type: 'number',
        minimum: 0,
        maximum: 1,
        description: `The cell passes this scorer when its score is at least this; default ${defaultThreshold}.`,
      },
      ...own,
    },
  };
}

const caseSensitive: JsonSchema = { type: 'boolean', description: 'Compare letter case too; default true.' };

const exact = scorerSchema('exact', 'The output equals the expected value (a string; an object expected is compared with the output parsed as JSON).', {
  case_sensitive: caseSensitive,
  trim: { type: 'boolean', description: 'Ignore whitespace around the output and the expected string; default true.' },
});

const contains = scorerSchema('contains', 'The output contains each value; score = the fraction found.', {
  value: {
    anyOf: [
      { type: 'string', minLength: 1, maxLength: 10000 },
      { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 10000 } },
    ],
    description: 'What the output must contain; default: the expected string.',
  },
  case_sensitive: caseSensitive,
});

const regex = scorerSchema(
  'regex',
  'The output matches a regular expression (searched in its first 20,000 characters).',
  {
    pattern: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_REGEX_PATTERN_LENGTH,
      description:
        'A JavaScript regular expression. Nested quantifiers such as `(a+)+`, repeated alternatives that overlap such as `(a|a)*`, ' +
        'and backreferences are refused.',
    },
    flags: { type: 'string', pattern: '^[imsu]*$', maxLength: 4, description: 'Any of `i`, `m`, `s`, `u`, each at most once.' },
  },
  ['pattern'],
);

const jsonSchema = scorerSchema(
  'json_schema',
  'The output, parsed as JSON (a surrounding ```json fence is allowed), matches a JSON Schema.',
  { schema: { type: 'object', description: 'A JSON Schema (2020-12).' } },
  ['schema'],
);

const jsonMatch = scorerSchema('json_match', 'The expected object is a subset of the output parsed as JSON; score = the fraction of expected values matched.', {
  expected: { type: 'object', description: "The object to look for; default: the case's expected object." },
});

const numeric = scorerSchema('numeric', 'The first number in the output equals the expected number, within a tolerance.', {
  tolerance: { type: 'number', minimum: 0, description: 'Absolute tolerance; default 0.' },
  relative_tolerance: {
    type: 'number',
    minimum: 0,
    description: 'Tolerance as a fraction of the expected number (0.01 = 1%). With both, being within either passes.',
  },
});

const semanticSimilarity = scorerSchema(
  'semantic_similarity',
  'Cosine similarity of the local embeddings of the output and the expected value, clamped to [0, 1].',
  {},
);

const llmJudge = scorerSchema(
  'llm_judge',
  'A model grades the output against a rubric with a score from 0 to 1.',
  {
    model: { type: 'string', minLength: 1, maxLength: 200, description: 'The judge model: `provider/model`, or `scripted`.' },
    rubric: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_RUBRIC_LENGTH,
      description:
        'What to grade, as a template: `{{input}}`, `{{output}}` and `{{expected}}` are filled in. Without `{{output}}` the output is ' +
        'appended after the rubric.',
    },
    script: { type: 'array', minItems: 1, items: scriptTurn, description: "Only with the `scripted` model: its answer (the first turn's text)." },
  },
  ['model', 'rubric'],
);

const toolCalled = scorerSchema(
  'tool_called',
  'The run called the named tools; score = the fraction found.',
  {
    tools: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 200 } },
    ordered: { type: 'boolean', description: 'The tools must have been called in this order (other calls may come between); default false.' },
  },
  ['tools'],
);

const costMax = scorerSchema(
  'cost_max',
  "The run's cost in USD is at most `max_usd`; an unknown cost fails.",
  {
    max_usd: {
      anyOf: [
        { type: 'string', pattern: '^\\d{1,12}(\\.\\d{1,20})?$' },
        { type: 'number', minimum: 0 },
      ],
      description: 'A decimal string such as "0.002" (exact), or a number.',
    },
  },
  ['max_usd'],
);

const latencyMax = scorerSchema(
  'latency_max',
  "The run's latency is at most `max_ms`; an unknown latency fails.",
  { max_ms: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER } },
  ['max_ms'],
);

export const scorerConfigSchemas: Readonly<Record<ScorerType, JsonSchema>> = {
  exact,
  contains,
  regex,
  json_schema: jsonSchema,
  json_match: jsonMatch,
  numeric,
  semantic_similarity: semanticSimilarity,
  llm_judge: llmJudge,
  tool_called: toolCalled,
  cost_max: costMax,
  latency_max: latencyMax,
};

/** A suite's or a case's `scorers`, for the API's request schemas. validate.ts gives clearer messages than this schema's errors. */
export const scorersSchema: JsonSchema = {
  type: 'array',
  maxItems: MAX_SCORERS,
  items: { anyOf: SCORER_TYPES.map((type) => scorerConfigSchemas[type]) },
  description: 'Scorers; a cell passes when each one\'s score reaches its threshold.',
};
