import { MAX_REQUEST_INTEGER, type JsonSchema } from '../json-schema/types.js';
import type { ScriptTurn } from '../models/types.js';
import type { GuardrailKind } from './types.js';

/**
 * The `config` of each guardrail kind: a JSON Schema (2020-12, clean under ajv `strict: true`, no
 * `default` keywords so that `useDefaults` never writes into a stored config) and the matching type.
 * Defaults are applied at evaluation time. What a schema cannot say (a pattern that compiles, a
 * decision model that exists) is checked by `guardrailConfigProblems`.
 */

export const MAX_REGEX_PATTERN_LENGTH = 1000;
export const PII_ENTITIES = ['email', 'phone', 'credit_card', 'us_ssn', 'iban', 'ip_address'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];
export const DEFAULT_SEMANTIC_THRESHOLD = 0.7;

export interface RegexConfig {
  pattern: string;
  flags?: string;
}

export interface KeywordConfig {
  keywords: string[];
}

export interface MaxLengthConfig {
  maxChars: number;
}

export interface PiiConfig {
  entities?: PiiEntity[];
  redaction?: 'label' | 'mask';
}

export interface JsonSchemaConfig {
  schema: JsonSchema;
}

export type SemanticQuestion = string | { instructions: string; threshold?: number };

export interface SemanticConfig {
  questions: Record<string, SemanticQuestion>;
  threshold?: number;
  context?: string;
  failClosed?: boolean;
  model?: string;
  script?: ScriptTurn[];
}

const threshold: JsonSchema = { type: 'number', minimum: 0, maximum: 1 };

const regex: JsonSchema = {
  type: 'object',
  required: ['pattern'],
  additionalProperties: false,
  properties: {
    pattern: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_REGEX_PATTERN_LENGTH,
      description:
        'A JavaScript regular expression. Nested quantifiers such as `(a+)+`, repeated alternatives that overlap ' +
        'such as `(a|a)*`, and backreferences are refused. Only the first 100 000 characters of a text are searched.',
    },
    flags: { type: 'string', pattern: '^[imsu]*$', maxLength: 4, description: 'Any of `i`, `m`, `s`, `u`, each at most once.' },
  },
};

const keyword: JsonSchema = {
  type: 'object',
  required: ['keywords'],
  additionalProperties: false,
  properties: {
    keywords: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: { type: 'string', minLength: 1, maxLength: 200 },
      description: 'Matched as whole words, ignoring case; the words of a phrase match across any whitespace.',
    },
  },
};

const maxLength: JsonSchema = {
  type: 'object',
  required: ['maxChars'],
  additionalProperties: false,
  properties: {
    maxChars: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER, description: 'The most characters (Unicode code points) a text may have.' },
  },
};

const pii: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    entities: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: [...PII_ENTITIES] },
      description: 'What to look for; all of them when omitted.',
    },
    redaction: {
      type: 'string',
      enum: ['label', 'mask'],
      description: '`label` (the default) replaces a value with its type, e.g. `[EMAIL]`; `mask` keeps its last 4 characters.',
    },
  },
};

const jsonSchema: JsonSchema = {
  type: 'object',
  required: ['schema'],
  additionalProperties: false,
  properties: {
    schema: { type: 'object', description: 'A JSON Schema (2020-12) the text, parsed as JSON, must match.' },
  },
};

/** One turn of a `scripted` model's script; also the script of an eval's scripted LLM judge. */
export const scriptTurn: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    text: { type: 'string' },
    tool_calls: {
      type: 'array',
      items: {
        type: 'object',
        required: ['tool'],
        additionalProperties: false,
        properties: { tool: { type: 'string' }, arguments: { type: 'object' } },
      },
    },
    usage: {
      anyOf: [
        {
          type: 'object',
          required: ['prompt_tokens', 'completion_tokens'],
          additionalProperties: false,
          properties: {
            prompt_tokens: { type: 'integer', minimum: 0, maximum: MAX_REQUEST_INTEGER },
            completion_tokens: { type: 'integer', minimum: 0, maximum: MAX_REQUEST_INTEGER },
          },
        },
        { type: 'null' },
      ],
    },
    delay_ms: { type: 'integer', minimum: 0, maximum: 600000 },
  },
};

const semantic: JsonSchema = {
  type: 'object',
  required: ['questions'],
  additionalProperties: false,
  properties: {
    questions: {
      type: 'object',
      minProperties: 1,
      maxProperties: 50,
      propertyNames: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
      additionalProperties: {
        anyOf: [
          { type: 'string', minLength: 1, maxLength: 4000 },
          {
            type: 'object',
            required: ['instructions'],
            additionalProperties: false,
            properties: { instructions: { type: 'string', minLength: 1, maxLength: 4000 }, threshold },
          },
        ],
      },
      description:
        'Statements about the text, by id. The decision model scores each from 0 to 1; a statement at or above its ' +
        'threshold trips the guardrail.',
    },
    threshold: { ...threshold, description: 'Threshold of statements that set none; default 0.7.' },
    context: { type: 'string', maxLength: 8000, description: 'Background the decision model is given with the statements.' },
    failClosed: {
      type: 'boolean',
      description: 'When the decision model fails or gives no usable score: trip (true) or let the text pass (false, the default).',
    },
    model: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'Decision model id (`provider/model` or `scripted`); default: the GUARDRAIL_MODEL environment variable.',
    },
    script: {
      type: 'array',
      minItems: 1,
      items: scriptTurn,
      description: "Only with the `scripted` model: its answer (the first turn's text).",
    },
  },
};

export const guardrailConfigSchemas: Record<GuardrailKind, JsonSchema> = {
  pii,
  regex,
  keyword,
  max_length: maxLength,
  json_schema: jsonSchema,
  semantic,
};
