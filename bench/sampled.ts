import type { SampledSubjectResult } from './run.js';

/** Helpers shared by the sample-timed benchmarks (ingest, search, conversion). */

/** A sampled subject that also reports its 95th percentile (the record keeps the extra field). */
export type SampledWithP95 = SampledSubjectResult & { latency_p95_ms: number };

export interface SubjectInfo {
  name: string;
  description: string;
  measures: string;
}

/**
 * The record of one subject from its successful latencies (ms). `wallMs` gives `completed_per_s` and
 * `wall_s` (set it for subjects measured as a rate); `errors` counts the failed samples left out.
 */
export function sampledResult(
  subject: SubjectInfo,
  latencies: number[],
  options: { concurrency?: number; wallMs?: number; errors?: number } = {},
): SampledWithP95 {
  const sorted = [...latencies].sort((a, b) => a - b);
  if (sorted.length === 0) throw new Error(`${subject.name}: no successful samples (${options.errors ?? 0} failed)`);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    name: subject.name,
    description: subject.description,
    measures: subject.measures,
    concurrency: options.concurrency ?? 1,
    samples: sorted.length,
    completed_per_s: options.wallMs === undefined ? null : round2(sorted.length / (options.wallMs / 1000)),
    wall_s: options.wallMs === undefined ? null : round2(options.wallMs / 1000),
    latency_p50_ms: round2(percentile(sorted, 50)),
    latency_p95_ms: round2(percentile(sorted, 95)),
    latency_p99_ms: round2(percentile(sorted, 99)),
    latency_avg_ms: round2(sum / sorted.length),
    latency_min_ms: round2(sorted[0]!),
    latency_max_ms: round2(sorted.at(-1)!),
    errors: options.errors ?? 0,
  };
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** a / b to three decimals; NaN when b is 0 or unknown (JSON writes it as null). */
export function ratio(a: number, b: number): number {
  return b === 0 || !Number.isFinite(b) || !Number.isFinite(a) ? NaN : Math.round((a / b) * 1000) / 1000;
}

/** A whole-number setting from the environment, at least `min`. */
export function wholeNumberFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, not '${raw}'`);
  return value;
}

/** Prints rows as an aligned table, the first column left-aligned. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  for (const row of rows) {
    console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  }
}
