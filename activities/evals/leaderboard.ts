import { Decimal } from 'decimal.js';
import type { CellOutcome } from '../../db/experiment-cells.js';
import type { CellScore, CellStatus } from '../../db/schema.js';

/**
 * An experiment's leaderboard, computed on read from its cells, so a running experiment shows its
 * partial ranking. "Done" cells are the completed and the failed ones: a failed cell counts as not
 * passed. Each scorer's mean is over the completed cells that have its score; the primary score, which
 * ranks, also counts each failed cell as 0, so a variant whose runs fail cannot rank on its survivors.
 */

export interface LeaderboardInput {
  variants: Array<{ name: string }>;
  repeats: number;
  /** The scorer whose mean ranks the variants; null ranks by pass rate. */
  primaryScorer: string | null;
  cells: CellOutcome[];
}

export interface ScorerSummary {
  mean: number;
  n: number;
  /** A 95% interval of the mean (normal approximation, clipped to [0, 1]); only with repeats and two scores or more. */
  ci95: [number, number] | null;
}

export interface LeaderboardRow {
  rank: number;
  variant: string;
  variant_index: number;
  cells: Record<CellStatus, number> & { total: number };
  primary_score: number | null;
  pass_rate: number | null;
  scores: Record<string, ScorerSummary>;
  latency_ms: { p50: number | null; p95: number | null };
  cost_usd: { total: string | null; mean: string | null };
  tokens: { prompt: number | null; completion: number | null; total: number | null };
}

export function leaderboard(input: LeaderboardInput): LeaderboardRow[] {
  const byVariant = input.variants.map(() => [] as CellOutcome[]);
  for (const cell of input.cells) byVariant[cell.variant_index]?.push(cell);
  const rows = input.variants.map((variant, index) => variantRow(variant.name, index, byVariant[index]!, input));
  rows.sort(
    (a, b) =>
      compareDescNullsLast(a.primary_score, b.primary_score) ||
      compareAscNullsLast(a.cost_usd.mean === null ? null : new Decimal(a.cost_usd.mean), b.cost_usd.mean === null ? null : new Decimal(b.cost_usd.mean)) ||
      a.variant_index - b.variant_index,
  );
  return rows.map((row, i) => ({ ...row, rank: i + 1 }));
}

function variantRow(name: string, index: number, cells: CellOutcome[], input: LeaderboardInput): Omit<LeaderboardRow, 'rank'> & { rank: 0 } {
  const counts = { total: cells.length, pending: 0, running: 0, completed: 0, failed: 0, skipped: 0 };
  for (const cell of cells) counts[cell.status] += 1;
  const done = cells.filter((cell) => cell.status === 'completed' || cell.status === 'failed');
  const completed = cells.filter((cell) => cell.status === 'completed');

  const scoreLists = new Map<string, number[]>();
  for (const cell of completed) {
    for (const [scorer, score] of Object.entries((cell.scores ?? {}) as Record<string, CellScore>)) {
      if (!scoreLists.has(scorer)) scoreLists.set(scorer, []);
      scoreLists.get(scorer)!.push(score.score);
    }
  }
  const scores = Object.fromEntries([...scoreLists].map(([scorer, values]) => [scorer, summarize(values, input.repeats > 1)]));
  const passRate = done.length === 0 ? null : done.filter((cell) => cell.passed === true).length / done.length;
  const primary = input.primaryScorer === null ? passRate : primaryScore(done, input.primaryScorer);

  const latencies = done.flatMap((cell) => (cell.latency_ms === null ? [] : [cell.latency_ms])).sort((a, b) => a - b);
  return {
    rank: 0,
    variant: name,
    variant_index: index,
    cells: counts,
    primary_score: primary,
    pass_rate: passRate,
    scores,
    latency_ms: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
    cost_usd: costs(done),
    tokens: {
      prompt: sumOrNull(done.map((cell) => cell.prompt_tokens)),
      completion: sumOrNull(done.map((cell) => cell.completion_tokens)),
      total: sumOrNull(done.map((cell) => cell.total_tokens)),
    },
  };
}

/** The primary scorer's mean over the done cells that have its score, each failed cell counting 0. */
function primaryScore(done: CellOutcome[], scorer: string): number | null {
  const values = done.flatMap((cell) => {
    const score = (cell.scores as Record<string, CellScore> | null)?.[scorer]?.score;
    return score !== undefined ? [cell.status === 'failed' ? 0 : score] : cell.status === 'failed' ? [0] : [];
  });
  return values.length === 0 ? null : values.reduce((sum, v) => sum + v, 0) / values.length;
}

function summarize(values: number[], withInterval: boolean): ScorerSummary {
  const n = values.length;
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  if (!withInterval || n < 2) return { mean, n, ci95: null };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1);
  const half = 1.96 * Math.sqrt(variance / n);
  return { mean, n, ci95: [Math.max(0, mean - half), Math.min(1, mean + half)] };
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

/** Exact total and mean; both null when any done cell's cost is unknown (an unknown cost is not zero). */
function costs(done: CellOutcome[]): { total: string | null; mean: string | null } {
  if (done.some((cell) => cell.cost_usd === null)) return { total: null, mean: null };
  const total = done.reduce((sum, cell) => sum.plus(cell.cost_usd!), new Decimal(0));
  return { total: total.toFixed(), mean: done.length === 0 ? null : total.dividedBy(done.length).toFixed() };
}

function sumOrNull(values: Array<number | null>): number | null {
  let sum = 0;
  for (const value of values) {
    if (value === null) return null;
    sum += value;
  }
  return sum;
}

/** Scores within this of each other tie (sums in another order differ in the last bits), and cost decides. */
const SCORE_EPSILON = 1e-9;

function compareDescNullsLast(a: number | null, b: number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return Math.abs(a - b) <= SCORE_EPSILON ? 0 : b - a;
}

function compareAscNullsLast(a: Decimal | null, b: Decimal | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a.comparedTo(b);
}

/** One cell's value in a comparison against a baseline: the primary score, else pass (1) or not (0). */
export function cellValue(cell: Pick<CellOutcome, 'scores' | 'passed'>, primaryScorer: string | null): number {
  const score = primaryScorer === null ? undefined : (cell.scores as Record<string, CellScore> | null)?.[primaryScorer]?.score;
  return score ?? (cell.passed ? 1 : 0);
}

export interface BaselineComparison {
  experiment_id: string;
  /** The baseline's variant compared against: the one of the same name, else its first. */
  baseline_variant: string;
  regressed: string[];
  improved: string[];
  unchanged: number;
}

/**
 * Per case, the mean value of this variant's done cells against the mean of the baseline variant's done
 * cells of the same case: lower is a regression, higher an improvement. Cases either side lacks are left out.
 */
export function compareWithBaseline(
  variantCells: CellOutcome[],
  baselineCells: CellOutcome[],
  primaryScorer: string | null,
): Omit<BaselineComparison, 'experiment_id' | 'baseline_variant'> {
  const mine = meanByCase(variantCells, primaryScorer);
  const theirs = meanByCase(baselineCells, primaryScorer);
  const regressed: string[] = [];
  const improved: string[] = [];
  let unchanged = 0;
  for (const [caseId, value] of mine) {
    const before = theirs.get(caseId);
    if (before === undefined) continue;
    if (value < before - SCORE_EPSILON) regressed.push(caseId);
    else if (value > before + SCORE_EPSILON) improved.push(caseId);
    else unchanged += 1;
  }
  return { regressed, improved, unchanged };
}

function meanByCase(cells: CellOutcome[], primaryScorer: string | null): Map<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const cell of cells) {
    if (cell.status !== 'completed' && cell.status !== 'failed') continue;
    const entry = sums.get(cell.case_id) ?? { sum: 0, n: 0 };
    entry.sum += cellValue(cell, primaryScorer);
    entry.n += 1;
    sums.set(cell.case_id, entry);
  }
  return new Map([...sums].map(([caseId, { sum, n }]) => [caseId, sum / n]));
}

/**
 * Cells by status, and the usage and exact cost of the finished ones (null where any finished cell's is
 * unknown): what db/experiment-cells.ts sums in SQL for lists, from cells already read.
 */
export function cellTotals(cells: CellOutcome[]) {
  const counts: Record<CellStatus, number> = { pending: 0, running: 0, completed: 0, failed: 0, skipped: 0 };
  for (const cell of cells) counts[cell.status] += 1;
  const done = cells.filter((cell) => cell.status === 'completed' || cell.status === 'failed');
  return {
    counts,
    usage: {
      prompt_tokens: sumOrNull(done.map((cell) => cell.prompt_tokens)),
      completion_tokens: sumOrNull(done.map((cell) => cell.completion_tokens)),
      total_tokens: sumOrNull(done.map((cell) => cell.total_tokens)),
      cost_usd: costs(done).total,
    },
  };
}
