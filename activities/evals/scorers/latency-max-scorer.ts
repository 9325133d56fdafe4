import type { LatencyMaxConfig } from './config-schemas.js';
import { verdict, type ScorerDefinition } from './scorer-definition.js';

/** 1 when the run took at most `max_ms`, else 0. An unknown latency scores 0. */
export const latencyMaxScorer: ScorerDefinition<LatencyMaxConfig> = {
  readsOutput: false,

  problems: () => [],

  expectedProblem: () => undefined,

  prepare(config) {
    return (subject) => {
      if (subject.latencyMs === null) return verdict(config, 0, `the run's latency is unknown, so it cannot be held to ${config.max_ms} ms`);
      const within = subject.latencyMs <= config.max_ms;
      return verdict(config, within ? 1 : 0, `the run took ${subject.latencyMs} ms, ${within ? 'within' : 'over'} the limit of ${config.max_ms} ms`);
    };
  },
};
