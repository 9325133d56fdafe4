import { Decimal } from 'decimal.js';
import type { CostMaxConfig } from './config-schemas.js';
import { verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * 1 when the run's exact cost is at most `max_usd`, else 0; compared as decimals. An unknown cost (a
 * model without a price, a provider that reported no usage) scores 0: a budget cannot be shown kept.
 */
export const costMaxScorer: ScorerDefinition<CostMaxConfig> = {
  readsOutput: false,

  problems: () => [],

  expectedProblem: () => undefined,

  prepare(config) {
    const max = new Decimal(config.max_usd);
    return (subject) => {
      if (subject.costUsd === null) {
        return verdict(config, 0, `the run's cost is unknown (a model without a price, or no usage reported), so it cannot be held to ${max.toFixed()} USD`);
      }
      const cost = new Decimal(subject.costUsd);
      const within = cost.lessThanOrEqualTo(max);
      return verdict(config, within ? 1 : 0, `the run cost ${cost.toFixed()} USD, ${within ? 'within' : 'over'} the budget of ${max.toFixed()} USD`);
    };
  },
};
