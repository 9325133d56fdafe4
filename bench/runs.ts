import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startsEagerly } from '../activities/eager-start.js';
import { runCallsFromEnv } from '../activities/runs/run-calls.js';
import type { RunCalls } from '../activities/runs/types.js';
import { TERMINAL_EVENTS } from '../db/runs.js';
import { AGENT_RUN_TASK_QUEUE } from '../workflows/agent-run-api.js';
import { PING_WORKFLOW_TYPE } from '../workflows/ping-api.js';
import type { ping } from '../workflows/ping.js';
import type { Platform } from '../workers/platform.js';
import { startBareRunShapeWorker } from './bare-run-shape.js';
import { startBenchPlatform } from './bench-platform.js';
import { KEY_USES, PlatformApi, type TimedFrame, type TimedStream } from './platform-api.js';
import type { BenchmarkResult, SampledSubjectResult } from './run.js';
import { percentile, ratio, round2, wholeNumberFromEnv } from './sampled.js';
import { benchmarkWithSettings } from './with-settings.js';
import { startCpuMeter, type CpuSpent } from './cpu-meter.js';

/**
 * Agent runs end to end on the real platform, beside bare Temporal client calls measured in the same run.
 *
 * The platform (API, workers in this process, Temporal dev server unless TEMPORAL_ADDRESS is set) runs
 * on DATABASE_URL's Postgres, or a throwaway PGlite when it is unset. Agents use the `scripted` model
 * with no delays, so what is measured is the platform: HTTP, auth, the rate-limit and run inserts, the
 * workflow start, workflow and activity tasks, event-log writes and the SSE fan-out. RUN_CALLS (as for
 * the platform: activities/runs/run-calls.ts) picks how runs make their model turns and tool calls;
 * run the benchmark once with each to compare them.
 *
 * - SEQUENTIAL (BENCH_RUNS, default 100): POST /v1/agents/{id}/runs of a one-node graph that calls the
 *   calculator tool and then answers with text; each run gives the latency to its first SSE event
 *   (`run.created`) and to `run.completed`, timed from just before the request.
 * - CONCURRENT (BENCH_RUN_TOTAL, default 256, BENCH_RUN_CONCURRENCY in flight, default 32): the same
 *   runs, each read to `run.completed`; runs completed per second of wall time. Also the CPU each run
 *   and each baseline workflow cost over its concurrent phase, this process's and the machine's
 *   (bench/cpu-meter.ts): less moved by the host's load than the rates.
 * - ANSWER (BENCH_ANSWERS, default 30): a graph whose first turn calls `ask_human`; its stream ends at
 *   `run.paused`. A GET /v1/runs/{id}/events stream is opened with `Last-Event-ID: <paused seq>`, and
 *   ANSWER_SETTLE_MS later POST /v1/runs/{id}/answer is sent; timed until the first event on that
 *   stream (`run.resumed`). The pause lets the server take the stream's request (auth, run lookup,
 *   subscription) before the answer: an SSE response sends its headers with its first event, so the
 *   client cannot see that moment. The answer's own response time is reported too.
 * - BASELINES, Temporal client calls on the same server and `runs` task queue, from the platform's own
 *   client: `workflow.start('ping')` until it returns (bare start; the result is awaited outside the
 *   timing so workflows do not pile up), and `workflow.execute('ping')`, start to result (one workflow
 *   task, one activity that queries the database, one more workflow task), sequentially and at the
 *   runs' concurrency.
 * - A SECOND BASELINE of the run's own shape (bench/bare-run-shape.ts): `workflow.execute` of a bare
 *   workflow of three activities in a row (with RUN_CALLS=local: five local activities, the run's steps
 *   as it then makes them), each a database query, on a bare worker of its own (the SDK's defaults) —
 *   sequentially and at the runs' concurrency. Against ping the ratio counts the run's extra steps too;
 *   against this one, what the platform adds to the work Temporal does for a workflow of that shape
 *   (its HTTP request and start, and the database writes of each step).
 *   Every baseline starts its workflows as runs start (workers/platform.ts): eagerly, its first
 *   workflow task handed to the worker in the start's reply, from a client on that worker's connection.
 *
 * Sequential samples are taken in rounds of one bare start, one ping execute, one bare run shape and
 * one run, so drift in the machine's load (other processes) hits platform and baselines alike.
 * BENCH_RUN_WARMUP runs, pings and bare run shapes (default 5) and one answered run go first,
 * unmeasured, after a checked run that must take the expected path.
 *
 * The run endpoint allows 60 requests per 60 s per API key, so every phase gets fresh standard keys
 * (POST /v1/api-keys), each used for at most KEY_USES runs, requests spread round-robin over them.
 */

/** Between opening the events stream and sending the answer (see ANSWER above). */
const ANSWER_SETTLE_MS = 100;
/** A run, stream or workflow that takes longer than this counts as an error. */
const SAMPLE_TIMEOUT_MS = 120_000;
const RUN_INPUT = 'What is 6 * 7?';
const RUN_OUTPUT = 'The answer is 42.';
/** Errors printed per subject; the rest are only counted. */
const ERRORS_SHOWN = 3;

interface RunsSettings {
  runs: number;
  concurrency: number;
  total: number;
  answers: number;
  warmup: number;
  /** RUN_CALLS, as the platform's workers read it: model turns and tool calls as activities or local ones. */
  runCalls: RunCalls;
}

function runsSettings(): RunsSettings {
  return {
    runs: wholeNumberFromEnv('BENCH_RUNS', 100, 1),
    concurrency: wholeNumberFromEnv('BENCH_RUN_CONCURRENCY', 32, 1),
    total: wholeNumberFromEnv('BENCH_RUN_TOTAL', 256, 1),
    answers: wholeNumberFromEnv('BENCH_ANSWERS', 30, 1),
    warmup: wholeNumberFromEnv('BENCH_RUN_WARMUP', 5, 0),
    runCalls: runCallsFromEnv(),
  };
}

export const runs = benchmarkWithSettings(
  'runs',
  runsSettings,
  (s) => `${s.runs} sequential runs, ${s.total} at concurrency ${s.concurrency}, ${s.answers} answers, RUN_CALLS=${s.runCalls}`,
  runRuns,
);

async function runRuns(settings: RunsSettings): Promise<BenchmarkResult> {
  const bench = await startBenchPlatform('runs');
  const bareShapes = await startBareRunShapeWorker(bench.platform, settings.runCalls, SAMPLE_TIMEOUT_MS).catch(async (err: unknown) => {
    await bench.stop();
    throw err;
  });
  try {
    const { platform, workspace } = bench;
    const api = new PlatformApi(platform.apiUrl, workspace.apiKey);
    const calculator = await createTool(api, { name: 'calculator', kind: 'builtin', builtin: 'calculator' });
    const askHuman = await createTool(api, { name: 'ask_human', kind: 'builtin', builtin: 'ask_human' });
    const mathAgent = await api.publishAgent('bench-calculator', [
      { tool_calls: [{ tool: 'calculator', arguments: { expression: '6 * 7' } }] },
      { text: RUN_OUTPUT },
    ], [calculator]);
    const askingAgent = await api.publishAgent('bench-ask-human', [
      { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Go on?' } }] },
      { text: 'Thanks, done.' },
    ], [askHuman]);

    // ---- warm-up ----
    const warmupKeys = await api.keysFor(settings.warmup + 2);
    const checked = await checkRun(api, mathAgent, warmupKeys.next());
    const pings = new Pings(platform);
    console.log(`[bench] warming up: ${settings.warmup} runs, pings and bare run shapes, one answer...`);
    for (let i = 0; i < settings.warmup; i++) {
      await timedRun(api, mathAgent, warmupKeys.next());
      await pings.execute();
      await pings.start();
      await bareShapes.execute();
    }
    if (settings.warmup > 0) await answerRound(api, askingAgent, warmupKeys.next());

    // ---- sequential: rounds of bare start, ping execute, bare run shape, run ----
    console.log(`[bench] sequential: ${settings.runs} rounds of bare start, ping execute, bare run shape and run...`);
    const sequentialKeys = await api.keysFor(settings.runs);
    const bareStart = new Samples();
    const pingExec = new Samples();
    const bareShape = new Samples();
    const firstEvent = new Samples();
    const completed = new Samples();
    let lastTimeline: Array<{ event: string; client_ms: number; server_ms: number }> = [];
    for (let i = 0; i < settings.runs; i++) {
      await bareStart.take(() => pings.start());
      await pingExec.take(() => pings.execute());
      await bareShape.take(() => bareShapes.execute());
      const run = await timedRun(api, mathAgent, sequentialKeys.next()).catch((err: unknown) => err as Error);
      if (run instanceof Error) {
        firstEvent.fail(run);
        completed.fail(run);
      } else {
        firstEvent.add(run.firstEventMs);
        completed.add(run.completedMs);
        lastTimeline = timeline(run);
      }
    }

    // ---- concurrent ----
    console.log(`[bench] concurrent: ${settings.total} ping executes, ${settings.total} bare run shapes, then ${settings.total} runs, ${settings.concurrency} at a time...`);
    let meter = startCpuMeter();
    const pingConcurrent = await concurrently(settings.total, settings.concurrency, () => pings.execute());
    const pingCpu = meter();
    meter = startCpuMeter();
    const bareShapeConcurrent = await concurrently(settings.total, settings.concurrency, () => bareShapes.execute());
    const bareShapeCpu = meter();
    const concurrentKeys = await api.keysFor(settings.total);
    meter = startCpuMeter();
    const runsConcurrent = await concurrently(settings.total, settings.concurrency, async () => {
      return (await timedRun(api, mathAgent, concurrentKeys.next())).completedMs;
    });
    const runsCpu = meter();
    const perItem = (spent: CpuSpent) => ({
      process_ms: round2(spent.processMs / settings.total),
      machine_busy_ms: spent.machineBusyMs === null ? null : round2(spent.machineBusyMs / settings.total),
    });
    const cpu = { run: perItem(runsCpu), ping: perItem(pingCpu), run_shape: perItem(bareShapeCpu) };

    // ---- answer → next event ----
    console.log(`[bench] answers: ${settings.answers} paused runs answered...`);
    const answerKeys = await api.keysFor(settings.answers);
    const nextEvent = new Samples();
    const answerResponse = new Samples();
    for (let i = 0; i < settings.answers; i++) {
      const round = await answerRound(api, askingAgent, answerKeys.next()).catch((err: unknown) => err as Error);
      if (round instanceof Error) {
        nextEvent.fail(round);
        answerResponse.fail(round);
      } else {
        nextEvent.add(round.nextEventMs);
        answerResponse.add(round.answerResponseMs);
      }
    }

    const fe = firstEvent.result({
      name: 'run-first-event',
      description: 'POST /v1/agents/{id}/runs (scripted: calculator call, then text): rate limit, run insert, workflow start, SSE',
      measures: 'request sent → first SSE event (run.created) parsed',
    });
    const done = completed.result({
      name: 'run-completed',
      description: 'the same runs read to the end: two model turns, one tool call, event log writes and SSE fan-out',
      measures: 'request sent → run.completed parsed',
    });
    const conc = runsConcurrent.result({
      name: 'run-completed-concurrent',
      description: `the same runs, ${settings.concurrency} in flight, each stream read to run.completed`,
      measures: 'request sent → run.completed parsed; completed_per_s over the wall time',
    });
    const next = nextEvent.result({
      name: 'answer-next-event',
      description: 'POST /v1/runs/{id}/answer to a run paused on ask_human, with GET /v1/runs/{id}/events open after the pause',
      measures: 'answer sent → first event (run.resumed) parsed on the open events stream',
    });
    const answered = answerResponse.result({
      name: 'answer-response',
      description: 'the same answers: a Temporal Update that returns once the run is running again',
      measures: 'answer sent → its 200 response read',
    });
    const start = bareStart.result({
      name: 'temporal-start',
      description: `baseline: the platform's Temporal client, workflow.start('ping') on the '${AGENT_RUN_TASK_QUEUE}' task queue`,
      measures: 'start called → handle returned (the server has recorded the workflow)',
    });
    const exec = pingExec.result({
      name: 'temporal-execute',
      description: "baseline: workflow.execute('ping'): a workflow task, one activity (a database query), a workflow task",
      measures: 'execute called → result returned',
    });
    const execConc = pingConcurrent.result({
      name: 'temporal-execute-concurrent',
      description: `baseline: workflow.execute('ping'), ${settings.concurrency} in flight`,
      measures: 'execute called → result returned; completed_per_s over the wall time',
    });
    const shape = bareShape.result({
      name: bareShapes.subject,
      description: `second baseline: workflow.execute of a bare workflow of the run's shape, ${bareShapes.description}, on a bare worker`,
      measures: 'execute called → result returned',
    });
    const shapeConc = bareShapeConcurrent.result({
      name: `${bareShapes.subject}-concurrent`,
      description: `second baseline: the same bare workflows, ${settings.concurrency} in flight`,
      measures: 'execute called → result returned; completed_per_s over the wall time',
    });
    return {
      database: platform.databaseKind,
      settings: {
        sequential_runs: settings.runs,
        concurrency: settings.concurrency,
        concurrent_runs: settings.total,
        answers: settings.answers,
        warmup_runs: settings.warmup,
        answer_settle_ms: ANSWER_SETTLE_MS,
        sample_timeout_ms: SAMPLE_TIMEOUT_MS,
        runs_per_api_key: KEY_USES,
        load_generator: { tool: 'fetch (undici) with an SSE reader, in the platform process', worker_threads: 0 },
      },
      details: {
        temporal: platform.temporalUiUrl ? 'dev server (in memory)' : 'external',
        workers: 'in-process',
        model: 'scripted, no delays',
        run_calls: settings.runCalls,
        run_graph: 'one node: a calculator tool call (6 * 7), then a text turn',
        events_per_run: checked.events,
        event_types: checked.types,
        last_sequential_run_timeline: lastTimeline,
        api_keys_used: api.keysCreated,
        sequential_order: `rounds of temporal-start, temporal-execute, ${bareShapes.subject}, run (first event and completed from the same run)`,
        // Runs start eagerly where the workers are in the API's process, and so do the baselines; the SDK
        // does not ask when the worker has no free workflow task slot.
        // CPU per run and per baseline workflow over the concurrent phases (bench/cpu-meter.ts).
        cpu_per_concurrent_item: cpu,
        baselines_started_eagerly: { pings: `${pings.eagerStarts} of ${pings.starts}`, run_shapes: `${bareShapes.eagerStarts()} of ${bareShapes.starts()}` },
      },
      subjects: [fe, done, conc, next, answered, start, exec, execConc, shape, shapeConc],
      ratios: {
        run_first_event_p50_over_temporal_start_p50: ratio(fe.latency_p50_ms, start.latency_p50_ms),
        run_first_event_p99_over_temporal_start_p99: ratio(fe.latency_p99_ms, start.latency_p99_ms),
        run_completed_p50_over_temporal_execute_p50: ratio(done.latency_p50_ms, exec.latency_p50_ms),
        run_completed_p99_over_temporal_execute_p99: ratio(done.latency_p99_ms, exec.latency_p99_ms),
        runs_per_s_over_temporal_executes_per_s: ratio(conc.completed_per_s ?? NaN, execConc.completed_per_s ?? NaN),
        run_concurrent_p50_over_temporal_execute_concurrent_p50: ratio(conc.latency_p50_ms, execConc.latency_p50_ms),
        answer_next_event_p50_over_temporal_execute_p50: ratio(next.latency_p50_ms, exec.latency_p50_ms),
        answer_next_event_p99_over_temporal_execute_p99: ratio(next.latency_p99_ms, exec.latency_p99_ms),
        run_completed_p50_over_run_shape_p50: ratio(done.latency_p50_ms, shape.latency_p50_ms),
        runs_per_s_over_run_shapes_per_s: ratio(conc.completed_per_s ?? NaN, shapeConc.completed_per_s ?? NaN),
        machine_cpu_per_run_over_run_shape: ratio(cpu.run.machine_busy_ms ?? NaN, cpu.run_shape.machine_busy_ms ?? NaN),
        machine_cpu_per_run_over_ping: ratio(cpu.run.machine_busy_ms ?? NaN, cpu.ping.machine_busy_ms ?? NaN),
        process_cpu_per_run_over_run_shape: ratio(cpu.run.process_ms, cpu.run_shape.process_ms),
      },
    };
  } finally {
    await bareShapes.stop().catch((err) => console.error('[bench] cleanup:', err));
    await bench.stop().catch((err) => console.error('[bench] cleanup:', err));
  }
}

// ---- the measured operations ----

/** One run read to its end: latencies from just before the request to its first event and to run.completed. */
async function timedRun(api: PlatformApi, agentId: string, key: string): Promise<{ t0: number; firstEventMs: number; completedMs: number; frames: TimedFrame[] }> {
  const t0 = performance.now();
  const response = await api.readStream('POST', `/v1/agents/${agentId}/runs`, key, { body: { input: RUN_INPUT }, timeoutMs: SAMPLE_TIMEOUT_MS });
  const last = response.frames.at(-1);
  if (response.status !== 200 || last?.event !== 'run.completed') throw new Error(`run did not complete: ${describe(response)}`);
  return { t0, firstEventMs: response.frames[0]!.at - t0, completedMs: last.at - t0, frames: response.frames };
}

/**
 * Where a run's time went, event by event (runs of deltas collapsed to their last): client_ms since the
 * request was sent (when the client parsed the frame), server_ms since run.created's created_at.
 */
function timeline(run: { t0: number; frames: TimedFrame[] }): Array<{ event: string; client_ms: number; server_ms: number }> {
  const origin = Date.parse(run.frames[0]!.data.created_at);
  return run.frames
    .filter((f, i, all) => f.event !== 'message.delta' || all[i + 1]?.event !== 'message.delta')
    .map((f) => ({ event: f.event, client_ms: round2(f.at - run.t0), server_ms: Date.parse(f.data.created_at) - origin }));
}

/** A run that must take the expected path, so the benchmark measures what it says it does. */
async function checkRun(api: PlatformApi, agentId: string, key: string): Promise<{ events: number; types: string[] }> {
  const { frames } = await timedRun(api, agentId, key);
  const types = frames.map((f) => f.event).filter((t, i, all) => t !== 'message.delta' || all[i - 1] !== 'message.delta');
  const tool = frames.find((f) => f.event === 'tool_call.completed');
  const output = frames.at(-1)!.data.output;
  if (frames[0]!.event !== 'run.created' || JSON.stringify(tool?.data.result) !== JSON.stringify({ result: 42 }) || output !== RUN_OUTPUT) {
    throw new Error(`sanity check: unexpected run: ${types.join(', ')}; tool result ${JSON.stringify(tool?.data.result)}, output ${JSON.stringify(output)}`);
  }
  return { events: frames.length, types };
}

/** A run paused on ask_human, then answered with its events stream already open. */
async function answerRound(api: PlatformApi, agentId: string, key: string): Promise<{ nextEventMs: number; answerResponseMs: number }> {
  const started = await api.readStream('POST', `/v1/agents/${agentId}/runs`, key, { body: { input: 'ask me' }, timeoutMs: SAMPLE_TIMEOUT_MS });
  const paused = started.frames.at(-1);
  if (started.status !== 200 || paused?.event !== 'run.paused') throw new Error(`run did not pause: ${describe(started)}`);
  const runId = String(started.frames[0]!.data.run_id);

  const rest = api.readStream('GET', `/v1/runs/${runId}/events`, key, { headers: { 'last-event-id': String(paused.id) }, timeoutMs: SAMPLE_TIMEOUT_MS });
  rest.catch(() => {}); // awaited below; this only keeps an early failure from being reported as unhandled
  await sleep(ANSWER_SETTLE_MS);
  const t0 = performance.now();
  const answer = await fetch(`${api.url}/v1/runs/${runId}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ answer: 'x' }),
    signal: AbortSignal.timeout(SAMPLE_TIMEOUT_MS),
  });
  const answerText = await answer.text();
  const answeredAt = performance.now();
  if (answer.status !== 200) throw new Error(`answer answered ${answer.status}: ${answerText}`);

  const after = await rest;
  const first = after.frames[0];
  if (first?.event !== 'run.resumed' || after.frames.at(-1)?.event !== 'run.completed') {
    throw new Error(`after the answer: ${describe(after)}`);
  }
  return { nextEventMs: first.at - t0, answerResponseMs: answeredAt - t0 };
}

/** workflow.start('ping') until it returns; the result is awaited untimed, so pings do not pile up. */
/** Ping's starts and executes, counting those whose first workflow task came back in the start's reply. */
class Pings {
  starts = 0;
  eagerStarts = 0;
  constructor(private readonly platform: Platform) {}

  /** workflow.start until it returns, in ms; the result is awaited outside the timing. */
  async start(): Promise<number> {
    const t0 = performance.now();
    const handle = await this.started();
    const ms = performance.now() - t0;
    await withTimeout(handle.result(), 'ping result');
    return ms;
  }

  /** Start to result, in ms. */
  async execute(): Promise<number> {
    const t0 = performance.now();
    await withTimeout(this.started().then((handle) => handle.result()), 'ping execute');
    return performance.now() - t0;
  }

  /** Started as runs are: by the client the API starts runs with, eagerly when the workers are beside it. */
  private async started() {
    const client = this.platform.runStarter;
    const handle = await client.workflow.start<typeof ping>(PING_WORKFLOW_TYPE, {
      taskQueue: AGENT_RUN_TASK_QUEUE,
      workflowId: `bench-ping-${randomUUID()}`,
      args: ['x'],
      requestEagerStart: startsEagerly(client),
    });
    this.starts++;
    if (handle.eagerlyStarted) this.eagerStarts++;
    return handle;
  }
}

/** `total` calls of `sample`, `concurrency` in flight at a time; wall time from the first start to the last end. */
async function concurrently(total: number, concurrency: number, sample: () => Promise<number>): Promise<Samples> {
  const samples = new Samples(concurrency);
  let started = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (started < total) {
      started++;
      await samples.take(sample);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
  samples.wallMs = performance.now() - t0;
  return samples;
}

// ---- samples and their statistics ----

class Samples {
  private readonly latencies: number[] = [];
  private errors = 0;
  /** Set for concurrent subjects; sequential ones report no rate. */
  wallMs: number | undefined;

  constructor(private readonly concurrency = 1) {}

  add(ms: number): void {
    this.latencies.push(ms);
  }

  fail(err: Error): void {
    this.errors++;
    if (this.errors <= ERRORS_SHOWN) console.error(`[bench] sample failed: ${err.message}`);
  }

  async take(sample: () => Promise<number>): Promise<void> {
    try {
      this.add(await sample());
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  result(subject: { name: string; description: string; measures: string }): SampledSubjectResult {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    if (sorted.length === 0) throw new Error(`${subject.name}: every sample failed (${this.errors})`);
    const sum = sorted.reduce((a, b) => a + b, 0);
    return {
      name: subject.name,
      description: subject.description,
      measures: subject.measures,
      concurrency: this.concurrency,
      samples: sorted.length,
      completed_per_s: this.wallMs === undefined ? null : round2(sorted.length / (this.wallMs / 1000)),
      wall_s: this.wallMs === undefined ? null : round2(this.wallMs / 1000),
      latency_p50_ms: round2(percentile(sorted, 50)),
      latency_p99_ms: round2(percentile(sorted, 99)),
      latency_avg_ms: round2(sum / sorted.length),
      latency_min_ms: round2(sorted[0]!),
      latency_max_ms: round2(sorted.at(-1)!),
      errors: this.errors,
    };
  }
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${SAMPLE_TIMEOUT_MS} ms`)), SAMPLE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- the API over HTTP ----

async function createTool(api: PlatformApi, tool: Record<string, unknown>): Promise<string> {
  const body = await api.json('POST', '/v1/tools', tool, [200, 201]);
  return body.tool.id;
}

/** A stream in a line, for errors: its status and event types, or its error body. */
function describe(stream: TimedStream): string {
  if (stream.body !== undefined) return `status ${stream.status}: ${stream.body}`;
  const last = stream.frames.at(-1);
  const detail = last && TERMINAL_EVENTS.has(last.event) && last.event !== 'run.completed' ? ` (${JSON.stringify(last.data.error ?? null)})` : '';
  return `status ${stream.status}, events ${stream.frames.map((f) => f.event).join(', ') || 'none'}${detail}`;
}
