import type { Embedder } from '../../embedding/index.js';
import type { ModelSettings } from '../../models/settings.js';
import type { TurnUsage } from '../../models/types.js';

/**
 * The contract between an eval cell and its scorers. A scorer reads what one cell produced (the run's
 * output, the tools it called, its cost and latency) beside the case's `expected`, and answers a score
 * in [0, 1] with a reason; the cell passes when every scorer's score reaches its threshold.
 */

export const SCORER_TYPES = [
  'exact',
  'contains',
  'regex',
  'json_schema',
  'json_match',
  'numeric',
  'semantic_similarity',
  'llm_judge',
  'tool_called',
  'cost_max',
  'latency_max',
] as const;
export type ScorerType = (typeof SCORER_TYPES)[number];

/** One entry of a suite's or a case's `scorers`: `type`, an optional `name` (default: the type), `threshold`, and the kind's own fields. */
export interface ScorerConfig {
  type: ScorerType;
  name?: string;
  threshold?: number;
  [field: string]: unknown;
}

/** What a cell produced, as its scorers see it. */
export interface ScoringSubject {
  input: string;
  /** The run's final answer; null when the run ended without one. */
  output: string | null;
  /** The case's expected value: a string, a JSON object, or null. */
  expected: unknown;
  metadata: Record<string, unknown>;
  /** The names of the tools the run called, in the order it called them. */
  toolCalls: string[];
  /** The run's exact cost in USD as a decimal string; null when unknown. */
  costUsd: string | null;
  latencyMs: number | null;
}

/** A model call a scorer made (an LLM judge); its cost counts toward the experiment's. */
export interface ScorerModelCall {
  scorer: string;
  model: string;
  usage: TurnUsage;
}

export interface ScoreContext {
  signal: AbortSignal;
  embedder: () => Embedder;
  modelSettings: ModelSettings | undefined;
  /** The names of the workspace's provider connections, which a judge model may name. */
  workspaceProviders?: ReadonlySet<string>;
  recordModelCall(call: ScorerModelCall): void;
}

export interface Score {
  /** In [0, 1]. */
  score: number;
  passed: boolean;
  reason: string;
}

/** A problem with a scorer's config; `field` is a path such as `scorers[1].pattern`. */
export interface ScorerConfigProblem {
  field: string;
  message: string;
}
