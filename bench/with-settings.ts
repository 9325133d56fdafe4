import type { Benchmark, BenchmarkResult } from './run.js';

/**
 * A benchmark that measures by settings of its own (BENCH_… variables, read by `settings`) rather than
 * the load generator's: they are read when the run is planned and again when it starts, and handed to
 * `plan` and `run`.
 */
export function benchmarkWithSettings<S>(
  name: string,
  settings: () => S,
  plan: (settings: S) => string,
  run: (settings: S) => Promise<BenchmarkResult>,
): Benchmark {
  return { name, plan: () => plan(settings()), run: () => run(settings()) };
}
