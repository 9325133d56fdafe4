import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentsList } from './agents-list.js';
import { conversion } from './conversion.js';
import { embedder } from './embedder.js';
import { experiments } from './experiments.js';
import { ingest } from './ingest.js';
import { runs } from './runs.js';
import { search } from './search.js';
import { sseFanout } from './sse-fanout.js';
import { subagents } from './subagents.js';

/**
 * `npm run bench`: runs every benchmark (or only those named on the command line, e.g.
 * `npm run bench -- agents-list`), writes one JSON file per benchmark run to
 * bench/results/<benchmark>-<ISO 8601 basic UTC timestamp>.json and prints a summary table.
 *
 * Settings, all from the environment: BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (default 16),
 * BENCH_WARMUP_S (default 2, not measured), BENCH_WORKERS (autocannon worker threads, default 1 so the
 * load generator does not share the servers' event loop; 0 runs it on the main thread). The database
 * and Temporal come from the usual DATABASE_URL / TEMPORAL_ADDRESS; unset means a throwaway PGlite and
 * an in-memory Temporal dev server. Those settings shape the load-tested (autocannon) benchmarks; a
 * benchmark that measures otherwise (`runs`, `experiments`: timed samples of their own) reads its own settings and
 * reports them in `BenchmarkResult.settings`.
 */

export interface BenchSettings {
  durationS: number;
  connections: number;
  warmupS: number;
  workers: number;
}

/** One load-tested endpoint: the platform, or the baseline it is compared with. */
export interface SubjectResult {
  name: string;
  /** What the subject is, in a sentence: how it serves the request. */
  description: string;
  /** Mean of autocannon's per-second samples. */
  requests_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_avg_ms: number;
  latency_max_ms: number;
  total_requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  bytes_per_s: number;
  /** CPU time of the thread that serves the subject, per request (µs), where the benchmark can tell. */
  main_thread_cpu_us_per_request?: number;
}

/**
 * One measured operation timed sample by sample (not load-tested): the platform's, or the baseline's it
 * is compared with. Latencies are in milliseconds to two decimals.
 */
export interface SampledSubjectResult {
  name: string;
  /** What the subject is, in a sentence. */
  description: string;
  /** What one sample is timed from and to. */
  measures: string;
  /** How many samples were in flight at once (1: one after another). */
  concurrency: number;
  /** Successful samples; the latencies are over these. */
  samples: number;
  /** Successful samples per second of wall time from the first start to the last end; null when sequential. */
  completed_per_s: number | null;
  /** That wall time; null when sequential. */
  wall_s: number | null;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_avg_ms: number;
  latency_min_ms: number;
  latency_max_ms: number;
  /** Samples that failed (an error answer, a run that did not complete, a timeout): left out of the latencies. */
  errors: number;
}

export interface BenchmarkResult {
  /** Extra facts about the run (database kind is recorded by the runner). */
  details: Record<string, unknown>;
  database: string;
  /**
   * The settings the benchmark ran with, written to the record in place of the load generator's
   * (connections, duration_s, warmup_s, load_generator); for benchmarks that are not load-tested.
   */
  settings?: Record<string, unknown>;
  subjects: Array<SubjectResult | SampledSubjectResult>;
  /**
   * platform / baseline per metric; load-tested benchmarks have requests_per_s, latency_p50 and
   * latency_p99. Below 1 for a rate and above 1 for a latency means the platform is slower than the
   * baseline. NaN (null in JSON) when the baseline is 0.
   */
  ratios: Record<string, number>;
}

export interface Benchmark {
  name: string;
  /** What this run will do, for the log and summary; by default the load generator's settings. */
  plan?(settings: BenchSettings): string;
  run(settings: BenchSettings): Promise<BenchmarkResult>;
}

const BENCHMARKS: Benchmark[] = [agentsList, runs, ingest, embedder, search, conversion, experiments, subagents, sseFanout];

/** BENCH_RESULTS_DIR, or bench/results/ (the smoke test writes elsewhere). */
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR || fileURLToPath(new URL('../../bench/results/', import.meta.url));

async function main(): Promise<void> {
  const settings: BenchSettings = {
    durationS: positiveNumberFromEnv('BENCH_DURATION_S', 10),
    connections: integer('BENCH_CONNECTIONS', positiveNumberFromEnv('BENCH_CONNECTIONS', 16)),
    warmupS: nonNegativeNumberFromEnv('BENCH_WARMUP_S', 2),
    workers: integer('BENCH_WORKERS', nonNegativeNumberFromEnv('BENCH_WORKERS', 1)),
  };
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => !BENCHMARKS.some((b) => b.name === name));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  const selected = only.length > 0 ? BENCHMARKS.filter((b) => only.includes(b.name)) : BENCHMARKS;

  await fs.mkdir(RESULTS_DIR, { recursive: true });
  for (const benchmark of selected) {
    const startedAt = new Date();
    const plan = benchmark.plan?.(settings) ?? `${settings.connections} connections, ${settings.durationS} s per subject`;
    console.log(`[bench] ${benchmark.name}: ${plan}...`);
    const result = await benchmark.run(settings);
    const finishedAt = new Date();
    const record = {
      benchmark: benchmark.name,
      started_at: startedAt.toISOString(),
      finished_at: finishedAt.toISOString(),
      machine: machineInfo(),
      database: result.database,
      ...(result.settings ?? {
        connections: settings.connections,
        duration_s: settings.durationS,
        warmup_s: settings.warmupS,
        load_generator: { tool: 'autocannon', worker_threads: settings.workers },
      }),
      ...result.details,
      subjects: result.subjects,
      ratios: result.ratios,
    };
    const file = path.join(RESULTS_DIR, `${benchmark.name}-${basicIsoTimestamp(startedAt)}.json`);
    await fs.writeFile(file, JSON.stringify(record, null, 2) + '\n');
    printSummary(benchmark, settings, result);
    console.log(`[bench] wrote ${path.relative(process.cwd(), file)}`);
  }
}

function machineInfo() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    node: process.version,
  };
}

function printSummary(benchmark: Benchmark, settings: BenchSettings, result: BenchmarkResult): void {
  const machine = machineInfo();
  console.log('');
  console.log(
    `${benchmark.name} | ${result.database} | ${benchmark.plan?.(settings) ?? `${settings.connections} connections x ${settings.durationS} s`} | ` +
      `${machine.cpus} cpus, node ${machine.node}`,
  );
  const r = result.ratios;
  const loadTested = result.subjects.filter((s): s is SubjectResult => 'requests_per_s' in s);
  if (loadTested.length > 0) {
    const rows: string[][] = [['subject', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors']];
    for (const s of loadTested) {
      rows.push([s.name, s.requests_per_s.toFixed(1), String(s.latency_p50_ms), String(s.latency_p99_ms), String(s.non_2xx), String(s.errors + s.timeouts)]);
    }
    rows.push(['platform/baseline', ratio(r.requests_per_s), ratio(r.latency_p50), ratio(r.latency_p99), '', '']);
    printTable(rows);
  }
  const sampled = result.subjects.filter((s): s is SampledSubjectResult => !('requests_per_s' in s));
  if (sampled.length > 0) {
    const rows: string[][] = [['subject', 'conc', 'n', 'p50 ms', 'p99 ms', 'avg ms', 'max ms', 'done/s', 'errors']];
    for (const s of sampled) {
      rows.push([
        s.name,
        String(s.concurrency),
        String(s.samples),
        s.latency_p50_ms.toFixed(1),
        s.latency_p99_ms.toFixed(1),
        s.latency_avg_ms.toFixed(1),
        s.latency_max_ms.toFixed(1),
        s.completed_per_s === null ? '' : s.completed_per_s.toFixed(1),
        String(s.errors),
      ]);
    }
    printTable(rows);
    console.log('');
    printTable([['ratio (platform/baseline)', 'value'], ...Object.entries(r).map(([name, value]) => [name, ratio(value)])]);
  }
  console.log('');
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  for (const row of rows) {
    console.log(row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join('  '));
  }
}

function ratio(value: number | undefined): string {
  return value !== undefined && Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a';
}

/** 2025-01-31T12:34:56.789Z → 20250131T123456Z: ISO 8601's basic format, safe in file names everywhere. */
function basicIsoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

function integer(name: string, value: number): number {
  if (!Number.isInteger(value)) throw new Error(`${name} must be a whole number, not ${value}`);
  return value;
}

function positiveNumberFromEnv(name: string, fallback: number): number {
  const value = nonNegativeNumberFromEnv(name, fallback);
  if (value === 0) throw new Error(`${name} must be greater than 0`);
  return value;
}

function nonNegativeNumberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not '${raw}'`);
  return value;
}

main().then(
  // The Temporal client and workers can keep handles open a little past stop(); the results are out.
  () => process.exit(0),
  (err: unknown) => {
    console.error('[bench] failed:', err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
