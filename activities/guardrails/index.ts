/** The guardrail engine: pure evaluation of guardrails on a text (see engine.ts for the rules). */
export { applyGuardrails } from './engine.js';
export { guardrailConfigProblems } from './config-problems.js';
export {
  guardrailConfigSchemas,
  DEFAULT_SEMANTIC_THRESHOLD,
  MAX_REGEX_PATTERN_LENGTH,
  PII_ENTITIES,
  type JsonSchemaConfig,
  type KeywordConfig,
  type MaxLengthConfig,
  type PiiConfig,
  type PiiEntity,
  type RegexConfig,
  type SemanticConfig,
  type SemanticQuestion,
} from './config-schemas.js';
export { GuardrailConfigError } from './errors.js';
export { REGEX_INPUT_LIMIT } from './regex-guardrail.js';
export { GUARDRAIL_MODEL_ENV } from './semantic-guardrail.js';
export {
  GUARDRAIL_KINDS,
  type DecisionModelCall,
  type Guardrail,
  type GuardrailAction,
  type GuardrailConfigProblem,
  type GuardrailKind,
  type GuardrailOptions,
  type GuardrailOutcome,
  type GuardrailTarget,
  type GuardrailTrip,
} from './types.js';
