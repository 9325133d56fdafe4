import { thresholdOf } from './config-schemas.js';
import type { Score, ScoreContext, ScorerConfig, ScorerConfigProblem, ScoringSubject } from './types.js';

/** A prepared scorer: scores one cell. */
export type ScoreFunction = (subject: ScoringSubject, context: ScoreContext) => Score | Promise<Score>;

/**
 * How one type of scorer works. Its functions take a config that the type's JSON Schema accepted.
 * Method syntax on purpose: a definition for one config type stands in the registry of all of them.
 */
export interface ScorerDefinition<Config> {
  /** Whether it scores the output: a run that ended without one scores 0 on it, before `prepare`'s function is called. */
  readonly readsOutput: boolean;
  /** What the schema cannot check; `path` is the scorer's own, e.g. `scorers[2]`, and fields extend it: `scorers[2].pattern`. */
  problems(config: Config, path: string, workspaceProviders?: ReadonlySet<string>): ScorerConfigProblem[];
  /** Why a case's `expected` cannot be scored by this scorer (e.g. "must be a number or a numeric string"), or undefined. */
  expectedProblem(config: Config, expected: unknown): string | undefined;
  /** Prepares the scorer once (compiling patterns and schemas), for a config without problems. */
  prepare(config: Config): ScoreFunction;
}

/** A score with `passed` decided by the scorer's threshold. */
export function verdict(config: ScorerConfig, score: number, reason: string): Score {
  return { score, passed: score >= thresholdOf(config), reason };
}

/** The output of a subject that a scorer reading outputs is given (score-cell.ts scores a missing output itself). */
export function outputOf(subject: ScoringSubject): string {
  if (subject.output === null) throw new Error('the run ended without an output');
  return subject.output;
}
