/** Eval scorers: what a cell's run produced, scored against its case (see score-cell.ts for the rules). */
export { scoreCell, type CellScores } from './score-cell.js';
export { expectedProblems, isScorerType, scorerConfigProblems, scorerProblems } from './validate.js';
export {
  DEFAULT_THRESHOLDS,
  MAX_SCORERS,
  scorerConfigSchemas,
  scorersSchema,
  thresholdOf,
  type ContainsConfig,
  type CostMaxConfig,
  type ExactConfig,
  type JsonMatchConfig,
  type JsonSchemaConfig,
  type LatencyMaxConfig,
  type LlmJudgeConfig,
  type NumericConfig,
  type RegexConfig,
  type SemanticSimilarityConfig,
  type ToolCalledConfig,
} from './config-schemas.js';
export { scorerName } from './scorer-name.js';
export {
  SCORER_TYPES,
  type Score,
  type ScoreContext,
  type ScorerConfig,
  type ScorerConfigProblem,
  type ScorerModelCall,
  type ScorerType,
  type ScoringSubject,
} from './types.js';
