import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { listWorkspaceQueuedHistories } from '../db/run-history-queue.js';
import { readAsTenant } from '../db/tenant-reads.js';
import { AGENT_RUN_WORKFLOW_TYPE } from '../workflows/agent-run-api.js';
import { EXPERIMENT_CELL_WORKFLOW_TYPE, EXPERIMENT_WORKFLOW_TYPE } from '../workflows/experiment-api.js';
import type { Platform } from '../workers/platform.js';
import { startBenchPlatform } from './bench-platform.js';
import { KEY_USES, PlatformApi, scriptedGraph, type TimedFrame } from './platform-api.js';
import { timedGetsInChildProcess } from './timed-gets.js';
import type { BenchmarkResult } from './run.js';
import { percentile, printTable, ratio, round2, sampledResult, wholeNumberFromEnv, type SampledWithP95 } from './sampled.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * Eval experiments end to end on the real platform (API, workers in this process, Temporal dev server
 * unless TEMPORAL_ADDRESS is set, DATABASE_URL's Postgres or a throwaway PGlite), each figure beside a
 * baseline measured in the same run. The agent is a one-node graph on the `scripted` model answering one
 * short text turn; its suite's cases are scored with `contains`.
 *
 * 1. THROUGHPUT, at each of BENCH_EXP_CONCURRENCIES (default "8,32"): an experiment of BENCH_EXP_CELLS
 *    cells (default 100: that many cases, one variant, one repeat; 15–30 s on 2 cores with PGlite, where
 *    cells and runs go at 3–6 per second) at that concurrency, timed from just
 *    before POST /v1/evals/experiments until a GET (polled every THROUGHPUT_POLL_MS) shows `completed`;
 *    cells per second of that wall time. BASELINE: BENCH_EXP_CELLS bare runs of the same agent with the
 *    same inputs through POST /v1/agents/{id}/runs, at most that many in flight, each stream read to
 *    `run.completed`; runs per second from the first request to the last end. BENCH_EXP_ROUNDS (default
 *    2) rounds per concurrency, in the order baseline, experiment, then experiment, baseline, … so drift in
 *    the machine's load hits both; the rates are over all rounds (samples / summed wall time). Per-cell
 *    latencies are the cells' own started_at → ended_at (run and scoring), read from the results matrix.
 * 2. CANCEL, BENCH_EXP_CANCEL_SAMPLES times (default 10): an experiment of CANCEL_CASES cells whose
 *    scripted turn takes BENCH_EXP_CANCEL_DELAY_MS (default 2000), at concurrency CANCEL_CONCURRENCY; once
 *    GET shows that many cells running, SETTLE_MS later DELETE /v1/evals/experiments/{id}, then GET is
 *    polled (every CANCEL_POLL_MS) until `cancelled`. By design the cells already running finish first,
 *    so the latency is mostly the rest of their slow turn; it is also split into the wait for those
 *    cells (DELETE → the last of them ended, the cells' ended_at) and the experiment's own wind-down
 *    (that end → `cancelled` seen). BASELINE: a run of the same slow turn through POST
 *    /v1/agents/{id}/runs, SETTLE_MS after `run.started` POST /v1/runs/{id}/cancel, then GET
 *    /v1/runs/{id} polled the same way until `cancelled` (a run's cancel aborts the model call). The
 *    run-cancel latency is the fair yardstick for the wind-down, not for the whole (which waits for
 *    running cells on purpose). Samples alternate experiment, run.
 * 3. RESULTS at scale: an experiment of BENCH_EXP_BIG_CASES cases (default 2500) × BENCH_EXP_BIG_VARIANTS
 *    variants (default 2) = 5,000 cells run through the real workflow at concurrency 32 (its wall time
 *    and cells/s are a side figure; polled every BIG_POLL_MS), then BENCH_EXP_GET_SAMPLES rounds
 *    (default 100) of GET /v1/evals/experiments/{id}?results=true, GET /v1/evals/experiments/{id}
 *    (leaderboard only) and GET /v1/runs?limit=200 (the BASELINES; a page of part 1's api runs), each
 *    timed from the request to its body read by a client in a process of its own (bench/timed-gets.ts
 *    says why: megabyte responses read in-process put the reader's GC into the figure), once the cells'
 *    runs have ended and their histories are archived (the archiver copies them after they end). The longest
 *    history among the experiment workflow's runs (its continue-as-new chain, walked back from the
 *    latest run through `continuedExecutionRunId`) is reported beside Temporal's 50k limit and
 *    EXPERIMENT_CELLS_PER_WORKFLOW_RUN.
 *
 * BENCH_EXP_WARMUP (default 10) runs and one experiment of that many cells go first, unmeasured. The run
 * endpoint allows 60 requests per 60 s per API key, so baseline runs use fresh standard keys, each for at
 * most KEY_USES runs; eval runs spend no key's budget. Parts 1 and 2's load generator is fetch in the
 * platform's own process, as in the `runs` benchmark.
 */

/**
 * How often a throughput measurement polls its experiment: ≤ 1% of a 20 s measurement, and rare enough
 * that the polls (each computes the leaderboard) take little of the database's time from the cells.
 */
const THROUGHPUT_POLL_MS = 250;
/** How often a cancel sample polls the experiment or run (one request at a time). */
const CANCEL_POLL_MS = 10;
const CANCEL_CONCURRENCY = 4;
/** Part 3 waits for its runs' histories to be archived after its experiment this long at most, polling this often. */
const QUIET_TIMEOUT_MS = 300_000;
const QUIET_POLL_MS = 500;
const CANCEL_CASES = 16;
/** After the cells are running (or the run started), so their model calls are in flight when cancelled. */
const SETTLE_MS = 300;
const BIG_CONCURRENCY = 32;
/** The 5,000-cell experiment is polled less often: each GET reads all its cells. */
const BIG_POLL_MS = 1000;
const CASES_PER_REQUEST = 1000;
const TIMEOUT_MS = 30 * 60_000;
const ANSWER = 'The capital of France is Paris.';
const HISTORY_LIMIT = 51_200;

interface ExperimentsSettings {
  cells: number;
  concurrencies: number[];
  rounds: number;
  cancelSamples: number;
  cancelDelayMs: number;
  bigCases: number;
  bigVariants: number;
  getSamples: number;
  warmup: number;
}

function experimentsSettings(): ExperimentsSettings {
  const raw = process.env.BENCH_EXP_CONCURRENCIES || '8,32';
  const concurrencies = raw.split(',').map((s) => Number(s.trim()));
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1 || c > 32)) throw new Error(`BENCH_EXP_CONCURRENCIES must be whole numbers in 1..32, not '${raw}'`);
  return {
    cells: wholeNumberFromEnv('BENCH_EXP_CELLS', 100, 1),
    concurrencies,
    rounds: wholeNumberFromEnv('BENCH_EXP_ROUNDS', 2, 1),
    cancelSamples: wholeNumberFromEnv('BENCH_EXP_CANCEL_SAMPLES', 10, 1),
    cancelDelayMs: wholeNumberFromEnv('BENCH_EXP_CANCEL_DELAY_MS', 2000, 1),
    bigCases: wholeNumberFromEnv('BENCH_EXP_BIG_CASES', 2500, 1),
    bigVariants: wholeNumberFromEnv('BENCH_EXP_BIG_VARIANTS', 2, 1),
    getSamples: wholeNumberFromEnv('BENCH_EXP_GET_SAMPLES', 100, 1),
    warmup: wholeNumberFromEnv('BENCH_EXP_WARMUP', 10, 0),
  };
}

export const experiments = benchmarkWithSettings(
  'experiments',
  experimentsSettings,
  (s) =>
    `${s.rounds} x ${s.cells} cells and runs at concurrency ${s.concurrencies.join(' and ')}, ${s.cancelSamples} cancels, ` +
    `${s.bigCases * s.bigVariants} cells then ${s.getSamples} GET rounds`,
  runExperiments,
);

async function runExperiments(settings: ExperimentsSettings): Promise<BenchmarkResult> {
  const bench = await startBenchPlatform('experiments');
  try {
    const { platform, workspace } = bench;
    const api = new Api(platform.apiUrl, workspace.apiKey);

    const fastAgent = await api.publishAgent('bench-exp-fast', [{ text: ANSWER }]);
    const slowAgent = await api.publishAgent('bench-exp-slow', [{ text: ANSWER, delay_ms: settings.cancelDelayMs }]);
    const inputs = Array.from({ length: Math.max(settings.cells, settings.warmup) }, (_, i) => `What is the capital of France? (${i + 1})`);
    const fastSuite = await api.createSuite(fastAgent, 'bench-fast', inputs.slice(0, settings.cells));
    const warmupSuite = settings.warmup > 0 ? await api.createSuite(fastAgent, 'bench-warmup', inputs.slice(0, settings.warmup)) : undefined;
    const slowSuite = await api.createSuite(slowAgent, 'bench-slow', inputs.slice(0, CANCEL_CASES));

    // ---- warm-up ----
    if (warmupSuite) {
      console.log(`[bench] warming up: ${settings.warmup} runs, one experiment of ${settings.warmup} cells...`);
      await runsAtConcurrency(api, fastAgent, inputs.slice(0, settings.warmup), 4);
      await timedExperiment(api, warmupSuite, 4);
    }

    // ---- 1. throughput ----
    const throughput: Array<{ concurrency: number; experiment: SampledWithP95; runs: SampledWithP95; rounds: unknown[] }> = [];
    for (const concurrency of settings.concurrencies) {
      const cells = new Rate();
      const runs = new Rate();
      const rounds: unknown[] = [];
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? ['runs', 'experiment'] : ['experiment', 'runs'];
        for (const subject of order) {
          console.log(`[bench] concurrency ${concurrency}, round ${round + 1}: ${settings.cells} ${subject === 'runs' ? 'bare runs' : 'experiment cells'}...`);
          if (subject === 'runs') {
            const measured = await runsAtConcurrency(api, fastAgent, inputs.slice(0, settings.cells), concurrency);
            runs.add(measured);
            rounds.push({ round: round + 1, subject, per_s: round2(measured.latencies.length / (measured.wallMs / 1000)), errors: measured.errors });
          } else {
            const measured = await timedExperiment(api, fastSuite, concurrency);
            cells.add(measured);
            rounds.push({ round: round + 1, subject, per_s: round2(measured.latencies.length / (measured.wallMs / 1000)), errors: measured.errors, server_s: measured.serverS, experiment_id: measured.experimentId });
          }
        }
      }
      throughput.push({
        concurrency,
        rounds,
        experiment: cells.result({
          name: `experiment-cells-c${concurrency}`,
          description: `an experiment of ${settings.cells} cells (cases; one variant of the scripted agent, contains scorer) at concurrency ${concurrency}`,
          measures: 'latencies: each cell started_at → ended_at (run and scoring); completed_per_s: cells over POST experiment → GET shows completed',
          concurrency,
        }),
        runs: runs.result({
          name: `bare-runs-c${concurrency}`,
          description: `baseline: ${settings.cells} POST /v1/agents/{id}/runs of the same agent and inputs, ${concurrency} in flight, each stream read to its end`,
          measures: 'request sent → run.completed parsed; completed_per_s over the first request → the last end',
          concurrency,
        }),
      });
    }

    // ---- 2. cancel ----
    console.log(`[bench] cancel: ${settings.cancelSamples} experiments and runs of a ${settings.cancelDelayMs} ms turn...`);
    const cancelKeys = await api.keysFor(settings.cancelSamples);
    const expCancel: number[] = [];
    const waitForRunning: number[] = [];
    const windDown: number[] = [];
    const deleteResponse: number[] = [];
    const runCancel: number[] = [];
    const cancelResponse: number[] = [];
    const cancelChecks: unknown[] = [];
    let cancelErrors = 0;
    let runCancelErrors = 0;
    for (let i = 0; i < settings.cancelSamples; i++) {
      try {
        const sample = await experimentCancel(api, slowSuite);
        expCancel.push(sample.latencyMs);
        waitForRunning.push(sample.waitForRunningMs);
        windDown.push(sample.windDownMs);
        deleteResponse.push(sample.deleteResponseMs);
        cancelChecks.push(sample.cells);
      } catch (err) {
        cancelErrors++;
        console.error(`[bench] experiment cancel failed: ${(err as Error).message}`);
      }
      try {
        const sample = await runCancelSample(api, slowAgent, cancelKeys.next());
        runCancel.push(sample.latencyMs);
        cancelResponse.push(sample.cancelResponseMs);
      } catch (err) {
        runCancelErrors++;
        console.error(`[bench] run cancel failed: ${(err as Error).message}`);
      }
    }

    // ---- 3. a 5,000-cell experiment and its results ----
    const bigCells = settings.bigCases * settings.bigVariants;
    console.log(`[bench] results: ${settings.bigCases} cases x ${settings.bigVariants} variants = ${bigCells} cells at concurrency ${BIG_CONCURRENCY}...`);
    const bigInputs = Array.from({ length: settings.bigCases }, (_, i) => `What is the capital of France? (big ${i + 1})`);
    const bigSuite = await api.createSuite(fastAgent, 'bench-big', bigInputs);
    const variants = Array.from({ length: settings.bigVariants }, (_, i) => ({ name: `variant-${i + 1}`, graph: scriptedGraph([{ text: ANSWER }]) }));
    const big = await timedExperiment(api, bigSuite, BIG_CONCURRENCY, { variants, pollMs: BIG_POLL_MS });
    const history = await historyOfChain(platform.temporal, big.experimentId);
    const quietAfterMs = await untilArchived(platform, workspace.tenantId);

    console.log(`[bench] results: ${settings.getSamples} rounds of GET ?results=true, GET, GET /v1/runs?limit=200...`);
    const checked = await api.json('GET', `/v1/evals/experiments/${big.experimentId}?results=true`);
    const matrixCells = checked.results.reduce((n: number, row: { cells: unknown[] }) => n + row.cells.length, 0);
    if (checked.results.length !== settings.bigCases || matrixCells !== bigCells) {
      throw new Error(`results matrix: ${checked.results.length} rows, ${matrixCells} cells; expected ${settings.bigCases} and ${bigCells}`);
    }
    const listed = await api.json('GET', '/v1/runs?limit=200');
    const gets = await timedGetsInChildProcess({
      url: platform.apiUrl,
      key: workspace.apiKey,
      rounds: settings.getSamples,
      paths: [`/v1/evals/experiments/${big.experimentId}?results=true`, `/v1/evals/experiments/${big.experimentId}`, '/v1/runs?limit=200'],
    });
    const [withResults, plain, runList] = gets.ms as [number[], number[], number[]];
    const bytes = { results: gets.bytes[0]!, plain: gets.bytes[1]!, runs: gets.bytes[2]! };

    // ---- the record ----
    const subjects: SampledWithP95[] = [];
    const ratios: Record<string, number> = {};
    for (const t of throughput) {
      subjects.push(t.experiment, t.runs);
      ratios[`cells_per_s_over_runs_per_s_c${t.concurrency}`] = ratio(t.experiment.completed_per_s ?? NaN, t.runs.completed_per_s ?? NaN);
    }
    const cancelSubject = sampledResult(
      {
        name: 'experiment-cancel',
        description: `DELETE /v1/evals/experiments/{id} of an experiment with ${CANCEL_CONCURRENCY} cells mid-turn (${settings.cancelDelayMs} ms scripted turn), ${CANCEL_CASES - CANCEL_CONCURRENCY} pending`,
        measures: `DELETE sent → GET (polled every ${CANCEL_POLL_MS} ms) shows cancelled; includes the running cells finishing, by design`,
      },
      expCancel,
      { errors: cancelErrors },
    );
    const waitSubject = sampledResult(
      {
        name: 'experiment-cancel-wait-for-running-cells',
        description: 'the part of experiment-cancel spent waiting for the cells that were running to finish (they are not cancelled)',
        measures: 'DELETE sent → the last of those cells ended (its ended_at)',
      },
      waitForRunning,
      { errors: cancelErrors },
    );
    const windSubject = sampledResult(
      {
        name: 'experiment-cancel-wind-down',
        description: "the experiment's own part: after its last running cell ended, skipping the pending cells and ending the record",
        measures: 'the last running cell ended (its ended_at) → GET shows cancelled',
      },
      windDown,
      { errors: cancelErrors },
    );
    const runCancelSubject = sampledResult(
      {
        name: 'run-cancel',
        description: `baseline: POST /v1/runs/{id}/cancel of a run of the same slow turn, ${SETTLE_MS} ms after run.started (the model call is aborted)`,
        measures: `cancel sent → GET /v1/runs/{id} (polled every ${CANCEL_POLL_MS} ms) shows cancelled`,
      },
      runCancel,
      { errors: runCancelErrors },
    );
    subjects.push(cancelSubject, waitSubject, windSubject, runCancelSubject);
    ratios.experiment_cancel_p50_over_run_cancel_p50 = ratio(cancelSubject.latency_p50_ms, runCancelSubject.latency_p50_ms);
    ratios.experiment_cancel_p95_over_run_cancel_p95 = ratio(cancelSubject.latency_p95_ms, runCancelSubject.latency_p95_ms);
    ratios.cancel_wind_down_p50_over_run_cancel_p50 = ratio(windSubject.latency_p50_ms, runCancelSubject.latency_p50_ms);
    ratios.cancel_wind_down_p95_over_run_cancel_p95 = ratio(windSubject.latency_p95_ms, runCancelSubject.latency_p95_ms);

    const resultsSubject = sampledResult(
      {
        name: `experiment-get-results-${bigCells}`,
        description: `GET /v1/evals/experiments/{id}?results=true of a completed ${bigCells}-cell experiment (${settings.bigCases} cases x ${settings.bigVariants} variants): leaderboard and matrix, ${bytes.results} bytes`,
        measures: 'request sent → body read',
      },
      withResults,
    );
    const plainSubject = sampledResult(
      {
        name: `experiment-get-${bigCells}`,
        description: `baseline: GET /v1/evals/experiments/{id} of the same experiment (leaderboard computed on read, no matrix), ${bytes.plain} bytes`,
        measures: 'request sent → body read',
      },
      plain,
    );
    const runsSubject = sampledResult(
      {
        name: 'runs-list-200',
        description: `baseline: GET /v1/runs?limit=200 (${listed.runs.length} api runs of this workspace), ${bytes.runs} bytes`,
        measures: 'request sent → body read',
      },
      runList,
    );
    subjects.push(resultsSubject, plainSubject, runsSubject);
    ratios.results_get_p95_over_plain_get_p95 = ratio(resultsSubject.latency_p95_ms, plainSubject.latency_p95_ms);
    ratios.results_get_p95_over_runs_list_p95 = ratio(resultsSubject.latency_p95_ms, runsSubject.latency_p95_ms);

    printSideFigures(throughput, big, history, resultsSubject);
    return {
      database: platform.databaseKind,
      settings: {
        cells_per_measurement: settings.cells,
        concurrencies: settings.concurrencies,
        rounds: settings.rounds,
        cancel_samples: settings.cancelSamples,
        cancel_delay_ms: settings.cancelDelayMs,
        cancel_concurrency: CANCEL_CONCURRENCY,
        cancel_cases: CANCEL_CASES,
        settle_ms: SETTLE_MS,
        throughput_poll_ms: THROUGHPUT_POLL_MS,
        cancel_poll_ms: CANCEL_POLL_MS,
        big_cases: settings.bigCases,
        big_variants: settings.bigVariants,
        big_concurrency: BIG_CONCURRENCY,
        big_poll_ms: BIG_POLL_MS,
        get_samples: settings.getSamples,
        warmup: settings.warmup,
        runs_per_api_key: KEY_USES,
        experiment_cells_per_workflow_run: process.env.EXPERIMENT_CELLS_PER_WORKFLOW_RUN || '500 (default)',
        load_generator: { tool: 'fetch (undici), in the platform process; part 3\'s GETs from a child process (bench/timed-gets.ts)', worker_threads: 0 },
      },
      details: {
        temporal: platform.temporalUiUrl ? 'dev server (in memory)' : 'external',
        workers: 'in-process',
        model: 'scripted: one text turn, no delay (throughput, results); the same turn with delay_ms (cancel)',
        goals: {
          cells_per_s_over_runs_per_s: '>= 0.8',
          results_get_p95_ms: '<= 50',
          met: {
            ...Object.fromEntries(throughput.map((t) => [`cells_per_s_c${t.concurrency}`, ratios[`cells_per_s_over_runs_per_s_c${t.concurrency}`]! >= 0.8])),
            results_get_p95: resultsSubject.latency_p95_ms <= 50,
          },
        },
        throughput_rounds: Object.fromEntries(throughput.map((t) => [`c${t.concurrency}`, t.rounds])),
        cancel: {
          delete_response_ms: summary(deleteResponse),
          run_cancel_response_ms: summary(cancelResponse),
          cells_after_each_cancel: cancelChecks,
        },
        big_experiment: {
          experiment_id: big.experimentId,
          cells: bigCells,
          concurrency: BIG_CONCURRENCY,
          wall_s: round2(big.wallMs / 1000),
          cells_per_s: round2(big.latencies.length / (big.wallMs / 1000)),
          server_s: big.serverS,
          failed_cells: big.errors,
          cell_latency_ms: summary(big.latencies),
          workflow_runs: history.runs,
          longest_history_events: history.longest,
          history_limit_events: HISTORY_LIMIT,
          results_rows: checked.results.length,
          results_bytes: bytes.results,
          quiet_wait_ms: quietAfterMs,
        },
      },
      subjects,
      ratios,
    };
  } finally {
    await bench.stop().catch((err) => console.error('[bench] cleanup:', err));
  }
}

function printSideFigures(
  throughput: Array<{ concurrency: number; experiment: SampledWithP95; runs: SampledWithP95 }>,
  big: ExperimentMeasurement,
  history: { runs: Array<{ run_id: string; history_events: number }>; longest: number },
  results: SampledWithP95,
): void {
  console.log('');
  printTable([
    ['concurrency', 'cells/s', 'runs/s', 'ratio (goal >= 0.8)'],
    ...throughput.map((t) => [String(t.concurrency), String(t.experiment.completed_per_s), String(t.runs.completed_per_s), String(ratio(t.experiment.completed_per_s ?? NaN, t.runs.completed_per_s ?? NaN))]),
  ]);
  console.log(
    `[bench] ${big.latencies.length} cells in ${round2(big.wallMs / 1000)} s (${round2(big.latencies.length / (big.wallMs / 1000))} cells/s); ` +
      `${history.runs.length} workflow runs, longest history ${history.longest} events; GET ?results=true p95 ${results.latency_p95_ms} ms (goal <= 50)`,
  );
}

function summary(values: number[]) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: round2(percentile(sorted, 50)), p95: round2(percentile(sorted, 95)), max: round2(sorted.at(-1)!) };
}

// ---- the measured operations ----

interface Measurement {
  latencies: number[];
  wallMs: number;
  errors: number;
}

interface ExperimentMeasurement extends Measurement {
  experimentId: string;
  /** The experiment's created_at → ended_at, by the server's clock. */
  serverS: number;
}

/** Rounds of one subject added up: its samples over its summed wall time. */
class Rate {
  private readonly latencies: number[] = [];
  private wallMs = 0;
  private errors = 0;

  add(measured: Measurement): void {
    this.latencies.push(...measured.latencies);
    this.wallMs += measured.wallMs;
    this.errors += measured.errors;
  }

  result(subject: { name: string; description: string; measures: string; concurrency: number }): SampledWithP95 {
    return sampledResult(subject, this.latencies, { concurrency: subject.concurrency, wallMs: this.wallMs, errors: this.errors });
  }
}

/** One bare run per input, at most `concurrency` in flight, each read to run.completed. */
async function runsAtConcurrency(api: Api, agentId: string, inputs: string[], concurrency: number): Promise<Measurement> {
  const keys = await api.keysFor(inputs.length);
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < inputs.length) {
      const input = inputs[next++]!;
      const started = performance.now();
      try {
        const { frames } = await api.stream('POST', `/v1/agents/${agentId}/runs`, keys.next(), { input });
        const last = frames.at(-1);
        if (last?.event !== 'run.completed' || last.data.output !== ANSWER) throw new Error(`run ended ${last?.event}: ${JSON.stringify(last?.data ?? null)}`);
        latencies.push(performance.now() - started);
      } catch (err) {
        if (++errors <= 3) console.error(`[bench] run failed: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, lane));
  return { latencies, wallMs: performance.now() - t0, errors };
}

/** An experiment of the suite at `concurrency`, timed from just before its POST until a GET shows it completed. */
async function timedExperiment(
  api: Api,
  suiteId: string,
  concurrency: number,
  options: { variants?: unknown[]; pollMs?: number } = {},
): Promise<ExperimentMeasurement> {
  const t0 = performance.now();
  const created = await api.json('POST', '/v1/evals/experiments', { suite: suiteId, variants: options.variants ?? [{ name: 'published' }], concurrency }, [201]);
  const id: string = created.experiment.id;
  let body;
  for (;;) {
    body = await api.json('GET', `/v1/evals/experiments/${id}`);
    if (body.experiment.status !== 'queued' && body.experiment.status !== 'running') break;
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`experiment ${id} still ${body.experiment.status} after ${TIMEOUT_MS} ms`);
    await sleep(options.pollMs ?? THROUGHPUT_POLL_MS);
  }
  const wallMs = performance.now() - t0;
  const { experiment } = body;
  if (experiment.status !== 'completed') throw new Error(`experiment ${id} ended ${experiment.status}: ${JSON.stringify(experiment.error)}`);
  const cells = await api.cells(id);
  const latencies = cells.filter((c) => c.status === 'completed').map((c) => c.ended_at!.getTime() - c.started_at!.getTime());
  const serverS = round2((Date.parse(experiment.ended_at) - Date.parse(experiment.created_at)) / 1000);
  return { experimentId: id, latencies, wallMs, errors: cells.length - latencies.length, serverS };
}

/** DELETE of an experiment with CANCEL_CONCURRENCY cells mid-turn; timed until GET shows it cancelled. */
async function experimentCancel(api: Api, suiteId: string) {
  const created = await api.json('POST', '/v1/evals/experiments', { suite: suiteId, variants: [{ name: 'published' }], concurrency: CANCEL_CONCURRENCY }, [201]);
  const id: string = created.experiment.id;
  const startedBy = Date.now() + 60_000;
  for (;;) {
    const { experiment } = await api.json('GET', `/v1/evals/experiments/${id}`);
    if (experiment.cells.running >= CANCEL_CONCURRENCY) break;
    if (experiment.status !== 'queued' && experiment.status !== 'running') throw new Error(`experiment ${id} ended ${experiment.status} before its cells ran`);
    if (Date.now() > startedBy) throw new Error(`experiment ${id}: cells not running after 60 s`);
    await sleep(CANCEL_POLL_MS);
  }
  await sleep(SETTLE_MS);

  const deleteSentAt = Date.now();
  const t0 = performance.now();
  await api.json('DELETE', `/v1/evals/experiments/${id}`, undefined, [202]);
  const deleteResponseMs = performance.now() - t0;
  let experiment;
  for (;;) {
    ({ experiment } = await api.json('GET', `/v1/evals/experiments/${id}`));
    if (experiment.status === 'cancelled') break;
    if (experiment.status !== 'running' && experiment.status !== 'queued') throw new Error(`experiment ${id} ended ${experiment.status}, not cancelled`);
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`experiment ${id} not cancelled after ${TIMEOUT_MS} ms`);
    await sleep(CANCEL_POLL_MS);
  }
  const latencyMs = performance.now() - t0;
  const seenAt = deleteSentAt + latencyMs;

  // The cells that were running at the DELETE finish and count; the rest are skipped.
  const cells = await api.cells(id);
  const finished = cells.filter((c) => c.status === 'completed' || c.status === 'failed');
  const lastEnd = Math.max(...finished.map((c) => c.ended_at!.getTime()));
  const counts = Object.fromEntries(['completed', 'failed', 'skipped', 'pending', 'running'].map((s) => [s, cells.filter((c) => c.status === s).length]));
  if (finished.length === 0 || counts.pending! + counts.running! > 0) throw new Error(`experiment ${id} cancelled with cells ${JSON.stringify(counts)}`);
  return { latencyMs, deleteResponseMs, waitForRunningMs: Math.max(0, lastEnd - deleteSentAt), windDownMs: Math.max(0, seenAt - lastEnd), cells: counts };
}

/** POST /v1/runs/{id}/cancel of a run SETTLE_MS into its slow turn; timed until GET shows it cancelled. */
async function runCancelSample(api: Api, agentId: string, key: string) {
  let started!: (runId: string) => void;
  const runStarted = new Promise<string>((resolve) => (started = resolve));
  const streamed = api.stream('POST', `/v1/agents/${agentId}/runs`, key, { input: 'What is the capital of France?' }, (frame) => {
    if (frame.event === 'run.started') started(String(frame.data.run_id));
  });
  streamed.catch(() => {}); // awaited below
  const runId = await Promise.race([runStarted, streamed.then((s) => Promise.reject(new Error(`run ended before it started: ${s.frames.map((f) => f.event).join(', ')}`)))]);
  await sleep(SETTLE_MS);

  const t0 = performance.now();
  await api.json('POST', `/v1/runs/${runId}/cancel`, undefined, [202]);
  const cancelResponseMs = performance.now() - t0;
  for (;;) {
    const { run } = await api.json('GET', `/v1/runs/${runId}`);
    if (run.status === 'cancelled') break;
    if (run.status !== 'running' && run.status !== 'queued') throw new Error(`run ${runId} ended ${run.status}, not cancelled`);
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`run ${runId} not cancelled after ${TIMEOUT_MS} ms`);
    await sleep(CANCEL_POLL_MS);
  }
  const latencyMs = performance.now() - t0;
  const last = (await streamed).frames.at(-1);
  if (last?.event !== 'run.cancelled') throw new Error(`run ${runId}'s stream ended with ${last?.event}`);
  return { latencyMs, cancelResponseMs };
}

/**
 * Waits until the cells' runs are archived: no run or experiment workflow running (the archiver never
 * ends, and a re-embedding may be running on an existing database: neither is waited for), and the
 * workspace's archive queue empty. Reads timed while thousands of histories are copied would measure the
 * archiving. Answers how long that took; a history whose copy failed fails the benchmark with its error.
 */
async function untilArchived(platform: Platform, tenantId: string): Promise<number> {
  const t0 = performance.now();
  const running = `ExecutionStatus = "Running" AND WorkflowType IN ("${AGENT_RUN_WORKFLOW_TYPE}", "${EXPERIMENT_WORKFLOW_TYPE}", "${EXPERIMENT_CELL_WORKFLOW_TYPE}")`;
  for (;;) {
    const queued = await readAsTenant(platform.db, tenantId, (reader) => listWorkspaceQueuedHistories(reader, tenantId));
    const failed = queued.find((row) => row.attempts > 0);
    if (failed) throw new Error(`the history of run ${failed.run_id} was not archived: ${failed.last_error}`);
    if (queued.length === 0 && (await platform.temporal.workflow.count(running)).count === 0) return Math.round(performance.now() - t0);
    if (performance.now() - t0 > QUIET_TIMEOUT_MS) throw new Error(`runs still running or not archived ${QUIET_TIMEOUT_MS} ms after the experiment ended`);
    await sleep(QUIET_POLL_MS);
  }
}

/**
 * The experiment workflow's runs, newest first, walked back through the continue-as-new chain
 * (`continuedExecutionRunId` of each run's first event), with each run's history length.
 */
async function historyOfChain(temporal: Client, experimentId: string) {
  const runs: Array<{ run_id: string; history_events: number; status: string }> = [];
  let runId: string | undefined;
  for (;;) {
    const handle = temporal.workflow.getHandle(experimentId, runId);
    const description = await handle.describe();
    const history = await handle.fetchHistory();
    runs.push({ run_id: description.runId, history_events: description.historyLength, status: description.status.name });
    if (history.events?.length !== description.historyLength) {
      throw new Error(`run ${description.runId}: describe says ${description.historyLength} events, its history has ${history.events?.length}`);
    }
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!runId) break;
  }
  return { runs: runs.reverse(), longest: Math.max(...runs.map((r) => r.history_events)) };
}

// ---- the API over HTTP ----

class Api extends PlatformApi {
  constructor(url: string, managementKey: string) {
    // The management key: setup, evals and new keys; runs use keys of their own.
    super(url, managementKey, 'bench-exp');
  }

  /** A suite of the agent scored with `contains` (expected: Paris), with one case per input. */
  async createSuite(agentId: string, name: string, inputs: string[]): Promise<string> {
    const { suite } = await this.json('POST', '/v1/evals/suites', { agent: agentId, name, scorers: [{ type: 'contains' }] }, [201]);
    for (let start = 0; start < inputs.length; start += CASES_PER_REQUEST) {
      const cases = inputs.slice(start, start + CASES_PER_REQUEST).map((input) => ({ input, expected: 'Paris' }));
      await this.json('POST', `/v1/evals/suites/${suite.id}/cases`, { cases }, [201]);
    }
    return suite.id;
  }

  /** The experiment's cells with their status and own timestamps, from its results matrix. */
  async cells(experimentId: string): Promise<Array<{ status: string; started_at: Date | null; ended_at: Date | null }>> {
    const { results } = await this.json('GET', `/v1/evals/experiments/${experimentId}?results=true`);
    return results.flatMap((row: { cells: Array<{ status: string; started_at: string | null; ended_at: string | null }> }) =>
      row.cells.map((cell) => ({
        status: cell.status,
        started_at: cell.started_at === null ? null : new Date(cell.started_at),
        ended_at: cell.ended_at === null ? null : new Date(cell.ended_at),
      })),
    );
  }

  /** Sends a request answered with an SSE stream and reads it to its end; any other answer is an error. */
  async stream(method: string, path: string, key: string, body: unknown, onFrame?: (frame: TimedFrame) => void): Promise<{ frames: TimedFrame[] }> {
    const answer = await this.readStream(method, path, key, { body, timeoutMs: TIMEOUT_MS, onFrame });
    if (answer.body !== undefined) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body}`);
    return answer;
  }
}
