import type { LanguageModelUsage } from 'ai';
import type { TurnUsage } from './types.js';

/** The SDK says "not reported" with undefined (or NaN after arithmetic); we say it with null, never 0. */
export function turnUsageFromSdk(usage: LanguageModelUsage | undefined): TurnUsage {
  return { prompt_tokens: reportedCount(usage?.inputTokens), completion_tokens: reportedCount(usage?.outputTokens) };
}

function reportedCount(count: number | undefined): number | null {
  return count !== undefined && Number.isFinite(count) ? count : null;
}

export interface UsageSum {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
}

/** A run's usage: one turn with an unknown count makes that part of the sum unknown (null), not smaller. */
export function sumUsage(turns: TurnUsage[]): UsageSum {
  const prompt = sumKnown(turns.map((turn) => turn.prompt_tokens));
  const completion = sumKnown(turns.map((turn) => turn.completion_tokens));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt === null || completion === null ? null : prompt + completion,
  };
}

function sumKnown(counts: Array<number | null>): number | null {
  let sum = 0;
  for (const count of counts) {
    if (count === null) return null;
    sum += count;
  }
  return sum;
}
