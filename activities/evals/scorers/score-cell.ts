import { SCORER_DEFINITIONS } from './kinds.js';
import { verdict } from './scorer-definition.js';
import { scorerName } from './scorer-name.js';
import type { Score, ScoreContext, ScorerConfig, ScoringSubject } from './types.js';
import { scorerProblems } from './validate.js';

export interface CellScores {
  /** By scorer name; a scorer that failed has no entry. */
  scores: Record<string, Score>;
  /** Every scorer reached its threshold and none failed. An empty list passes. */
  passed: boolean;
  /** Why scoring broke, naming each scorer that failed; null when none did. */
  failure: string | null;
}

/**
 * Scores one cell with each scorer in order. A scorer that breaks (its config is invalid, it throws,
 * its model or embedder fails, it answers a score outside [0, 1]) does not stop the others: it gets
 * no score and its reason goes into `failure`, which fails the cell but never the caller. A run that
 * ended without an output scores 0 on every scorer that reads the output; that is a result, not a
 * failure. Only cancellation (an aborted `context.signal`) rejects.
 */
export async function scoreCell(scorers: ScorerConfig[], subject: ScoringSubject, context: ScoreContext): Promise<CellScores> {
  // A Map, not an object: a scorer named like an Object.prototype key must still be a plain entry.
  const scores = new Map<string, Score>();
  const failures: string[] = [];
  for (const config of scorers) {
    context.signal.throwIfAborted();
    const name = scorerName(config);
    try {
      const score = await scoreOne(config, subject, context);
      if (!(score.score >= 0 && score.score <= 1)) throw new Error(`it answered the score ${score.score}, which is not in [0, 1]`);
      scores.set(name, score);
    } catch (err) {
      if (context.signal.aborted) throw err; // the activity was cancelled: not the scorer's failure
      failures.push(`scorer '${name}' failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const failure = failures.length > 0 ? failures.join('; ') : null;
  return { scores: Object.fromEntries(scores), passed: failure === null && [...scores.values()].every((score) => score.passed), failure };
}

async function scoreOne(config: ScorerConfig, subject: ScoringSubject, context: ScoreContext): Promise<Score> {
  // Configs were checked when they were stored; checking again is cheap and guards against ones stored by an older version.
  const problems = scorerProblems(config, '', context.workspaceProviders).map(({ field, message }) => (field ? `${field.replace(/^\./, '')} ${message}` : message));
  if (problems.length > 0) throw new Error(`its config is invalid: ${problems.join('; ')}`);
  const definition = SCORER_DEFINITIONS[config.type];
  if (definition.readsOutput && subject.output === null) return verdict(config, 0, 'the run ended without an output');
  return definition.prepare(config)(subject, context);
}
