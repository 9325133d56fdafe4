import { expect } from 'chai';
import { compareWithBaseline, leaderboard } from '../activities/evals/leaderboard.js';
import type { CellOutcome } from '../db/experiment-cells.js';

/** A finished cell of variant `v` for case `c`: completed with an `exact` score, or failed without one. */
function cell(v: number, c: string, outcome: number | 'failed', extra: Partial<CellOutcome> = {}): CellOutcome {
  const failed = outcome === 'failed';
  return {
    case_id: c,
    variant_index: v,
    status: failed ? 'failed' : 'completed',
    scores: failed ? null : { exact: { score: outcome, passed: outcome === 1, reason: '' } },
    passed: !failed && outcome === 1,
    latency_ms: 100,
    prompt_tokens: 1,
    completion_tokens: 1,
    total_tokens: 2,
    cost_usd: '0.01',
    ...extra,
  };
}

describe('evals: leaderboard', () => {
  const variants = [{ name: 'survivor' }, { name: 'steady' }];

  it('counts failed cells as 0 in the primary score, so a variant whose runs fail cannot rank on its survivors', () => {
    const cells = [
      cell(0, 'a', 1),
      ...['b', 'c', 'd'].map((c) => cell(0, c, 'failed')),
      ...['a', 'b', 'c', 'd'].map((c, i) => cell(1, c, i === 0 ? 0 : 1)),
    ];
    const [first, second] = leaderboard({ variants, repeats: 1, primaryScorer: 'exact', cells });
    expect(first).to.include({ variant: 'steady', primary_score: 0.75, pass_rate: 0.75 });
    expect(second).to.include({ variant: 'survivor', primary_score: 0.25, pass_rate: 0.25 });
    // The scorer's own mean is over the cells that have its score, with how many that is.
    expect(second!.scores.exact).to.deep.equal({ mean: 1, n: 1, ci95: null });
  });

  it('breaks a tie of primary scores by mean cost (within rounding), and leaves unknown costs last', () => {
    const cells = [cell(0, 'a', 0.1 + 0.2, { cost_usd: '0.02' }), cell(1, 'a', 0.3, { cost_usd: '0.01' })];
    const rows = leaderboard({ variants, repeats: 1, primaryScorer: 'exact', cells });
    expect(rows.map((row) => row.variant)).to.deep.equal(['steady', 'survivor']);
    const unknown = leaderboard({ variants, repeats: 1, primaryScorer: 'exact', cells: [cell(0, 'a', 1, { cost_usd: '5' }), cell(1, 'a', 1, { cost_usd: null })] });
    expect(unknown.map((row) => [row.variant, row.cost_usd.total])).to.deep.equal([['survivor', '5'], ['steady', null]]);
  });

  it('gives an interval only with repeats, and sums exact costs', () => {
    const cells = [cell(0, 'a', 1, { cost_usd: '0.1' }), cell(0, 'a', 0, { cost_usd: '0.2' }), cell(0, 'b', 1, { cost_usd: '0.3' })];
    const [row] = leaderboard({ variants: [variants[0]!], repeats: 3, primaryScorer: null, cells });
    expect(row!.cost_usd).to.deep.equal({ total: '0.6', mean: '0.2' });
    const [low, high] = row!.scores.exact!.ci95!;
    expect(low).to.be.at.least(0);
    expect(high).to.be.at.most(1);
    expect(row!.primary_score).to.equal(row!.pass_rate);
  });

  it('compares case by case against a baseline', () => {
    const mine = [cell(0, 'a', 1), cell(0, 'b', 0), cell(0, 'c', 1)];
    const theirs = [cell(0, 'a', 0), cell(0, 'b', 1), cell(0, 'c', 1), cell(0, 'z', 1)];
    expect(compareWithBaseline(mine, theirs, 'exact')).to.deep.equal({ regressed: ['b'], improved: ['a'], unchanged: 1 });
  });
});
