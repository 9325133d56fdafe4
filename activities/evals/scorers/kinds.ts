import { containsScorer } from './contains-scorer.js';
import { costMaxScorer } from './cost-max-scorer.js';
import { exactScorer } from './exact-scorer.js';
import { jsonMatchScorer } from './json-match-scorer.js';
import { jsonSchemaScorer } from './json-schema-scorer.js';
import { latencyMaxScorer } from './latency-max-scorer.js';
import { llmJudgeScorer } from './llm-judge-scorer.js';
import { numericScorer } from './numeric-scorer.js';
import { regexScorer } from './regex-scorer.js';
import type { ScorerDefinition } from './scorer-definition.js';
import { semanticSimilarityScorer } from './semantic-similarity-scorer.js';
import { toolCalledScorer } from './tool-called-scorer.js';
import type { ScorerType } from './types.js';

/** Each scorer type's behaviour; its config shape is in config-schemas.ts. */
export const SCORER_DEFINITIONS: Record<ScorerType, ScorerDefinition<unknown>> = {
  exact: exactScorer,
  contains: containsScorer,
  regex: regexScorer,
  json_schema: jsonSchemaScorer,
  json_match: jsonMatchScorer,
  numeric: numericScorer,
  semantic_similarity: semanticSimilarityScorer,
  llm_judge: llmJudgeScorer,
  tool_called: toolCalledScorer,
  cost_max: costMaxScorer,
  latency_max: latencyMaxScorer,
};
