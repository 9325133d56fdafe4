import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import pg from 'pg';
import { eventLogReads } from '../db/event-log.js';
import { appendRunEventsNow } from '../db/run-events.js';
import { createQueuedRun, markRunRunning } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { startBenchPlatform } from './bench-platform.js';
import { PlatformApi } from './platform-api.js';
import type { BenchmarkResult } from './run.js';
import type { ClientCommand, ClientReply } from './sse-clients.js';
import { ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * Live event streams (SSE) fanned out by ONE API process: many subscribers of the same runs.
 *
 * The platform runs in this process (DATABASE_URL's Postgres or a throwaway PGlite). BENCH_SSE_RUNS runs
 * (default 200) are recorded as running through the repository (db/runs.ts) and never started (the
 * stranded-work sweep starts only `queued` ones: workers/stranded-work/), so they stay live and
 * nothing but this benchmark writes to their logs. Events are appended to them round-robin at
 * BENCH_SSE_RATE events per second in all (default 200, one per run per second) through
 * appendRunEventsNow — the repository function the worker's activities write events with (its NOTIFY is
 * what wakes the streams). The subject is the API's fan-out, not the model.
 *
 * The clients (bench/sse-clients.ts) run in a child process and read GET /v1/runs/{id}/events over real
 * HTTP, one socket each. Each event carries `sent_at`, taken just before its append (so the append's own
 * transaction is inside the figure); its latency is until a client has parsed the frame.
 *
 * - WARM-UP (not measured): 1 subscriber per run, 5 s of events.
 * - BASELINE: 1 subscriber per run (BENCH_SSE_RUNS streams), BENCH_SSE_DURATION_S (default 20) of events.
 * - PLATFORM: BENCH_SSE_PER_RUN subscribers per run (default 10: 2,000 streams), the same events.
 * Per subject: delivery latency p50/p99, streams dropped, frames out of order or missing, and the SQL
 * statements per event the API spends (on Postgres: every statement this process sent, counted on
 * pg.Client, minus what the writer alone costs per event, measured first with no stream open) with the
 * event-log reads per event (db/event-log.ts's counter). Memory: this process's RSS and V8 heap after a
 * full GC with the PLATFORM's streams open after their events, minus the same before any stream was open.
 */

interface SseSettings {
  runs: number;
  perRun: number;
  rate: number;
  durationS: number;
}

function sseSettings(): SseSettings {
  return {
    runs: wholeNumberFromEnv('BENCH_SSE_RUNS', 200, 1),
    perRun: wholeNumberFromEnv('BENCH_SSE_PER_RUN', 10, 1),
    rate: wholeNumberFromEnv('BENCH_SSE_RATE', 200, 1),
    durationS: wholeNumberFromEnv('BENCH_SSE_DURATION_S', 20, 1),
  };
}

/** The unmeasured round of streams before the baseline's. */
const WARMUP_S = 5;
/** Time for the last events' frames to arrive after the writer stops. */
const DRAIN_MS = 2000;
/** Appends in flight at once, at most: a slow database shows as a lower rate, not a pile-up. */
const MAX_APPENDS_IN_FLIGHT = 16;

export const sseFanout = benchmarkWithSettings(
  'sse-fanout',
  sseSettings,
  (s) => `${s.runs} live runs, ${s.runs} then ${s.runs * s.perRun} SSE streams, ${s.rate} events/s for ${s.durationS} s each`,
  runSseFanout,
);

interface Phase {
  latencies: number[];
  events: number;
  dropped: number;
  gaps: number;
  duplicates: number;
  statements: number;
  reads: number;
  wallMs: number;
}

async function runSseFanout(settings: SseSettings): Promise<BenchmarkResult> {
  const cleanup: Array<() => Promise<void>> = [];
  try {
    const bench = await startBenchPlatform('sse');
    cleanup.push(() => bench.stop());
    const { platform, workspace } = bench;
    const api = new PlatformApi(platform.apiUrl, workspace.apiKey);
    const agentId = await api.publishAgent('bench-sse', [{ text: 'never run' }]);
    const runIds: string[] = [];
    for (let i = 0; i < settings.runs; i++) {
      const queued = await withTenant(platform.db, workspace.tenantId, async (tx) => {
        const recorded = await createQueuedRun(tx, { tenantId: workspace.tenantId, agentId, input: `stream ${i}`, source: 'api' });
        if (recorded.queued) await markRunRunning(tx, workspace.tenantId, recorded.runId, { prompts: [], model: 'scripted/bench-sse' });
        return recorded;
      });
      if (!queued.queued) throw new Error(`queuing run ${i}: ${queued.reason}`);
      runIds.push(queued.runId);
    }

    const statements = countStatements(platform.databaseKind);
    cleanup.push(async () => statements.stop());
    const gc = vm.runInNewContext('gc') as () => void;

    const clients = await startClients();
    cleanup.push(() => clients.stop());

    // What the writer alone costs per event (and anything else of the process's in that time).
    const idleStart = statements.count;
    const idle = await produce(platform, workspace.tenantId, runIds, settings.rate, Math.min(5, settings.durationS));
    const writerStatementsPerEvent = (statements.count - idleStart) / idle.events;

    const phase = async (perRun: number, memory?: { before: Memory; open?: Memory; after?: Memory }, durationS = settings.durationS): Promise<Phase> => {
      const streams = runIds.flatMap((runId) => Array.from({ length: perRun }, () => ({ runId, after: 0 })));
      const opened = await clients.ask({ cmd: 'open', url: platform.apiUrl, key: workspace.apiKey, streams });
      if (opened.type !== 'opened' || opened.failed > 0) throw new Error(`opening ${streams.length} streams: ${JSON.stringify(opened)}`);
      const backlog = await clients.ask({ cmd: 'collect' }); // the backlog (run.created) is not timed
      if (backlog.type !== 'report') throw new Error('no report');
      if (memory) memory.open = measureMemory(gc);
      const s0 = statements.count;
      const r0 = eventLogReads.run_events;
      const produced = await produce(platform, workspace.tenantId, runIds, settings.rate, durationS);
      await new Promise((resolve) => setTimeout(resolve, DRAIN_MS));
      const report = await clients.ask({ cmd: 'collect' });
      if (report.type !== 'report') throw new Error('no report');
      const result: Phase = {
        latencies: report.latencies,
        events: produced.events,
        dropped: backlog.dropped + report.dropped,
        gaps: backlog.gaps + report.gaps,
        duplicates: backlog.duplicates + report.duplicates,
        statements: statements.count - s0,
        reads: eventLogReads.run_events - r0,
        wallMs: produced.wallMs,
      };
      if (memory) memory.after = measureMemory(gc);
      await clients.ask({ cmd: 'close' });
      // The server notices the hang-ups on its own time; let the streams end before the next phase.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const expected = produced.events * perRun;
      console.log(`[bench] ${streams.length} streams: ${report.latencies.length} of ${expected} frames timed, ${report.dropped} dropped`);
      return result;
    };

    // Before any stream has been open: RSS rarely shrinks, so a later "none" would hide the baseline's share.
    const pristine = measureMemory(gc);
    // Unmeasured: the first streams' reads and frames warm the code paths and connections (measured
    // first, the baseline's p99 was the warm-up's).
    console.log(`[bench] warm-up: ${settings.runs} streams, ${WARMUP_S} s...`);
    await phase(1, undefined, Math.min(WARMUP_S, settings.durationS));
    console.log(`[bench] baseline: ${settings.runs} streams...`);
    const baseline = await phase(1);
    const memory: { before: Memory; open?: Memory; after?: Memory } = { before: measureMemory(gc) };
    console.log(`[bench] platform: ${settings.runs * settings.perRun} streams...`);
    const fanout = await phase(settings.perRun, memory);

    const describe = (p: Phase, perRun: number) => ({
      streams: settings.runs * perRun,
      events: p.events,
      frames_expected: p.events * perRun,
      frames_timed: p.latencies.length,
      streams_dropped: p.dropped,
      frames_out_of_order: p.gaps + p.duplicates,
      event_log_reads_per_event: round2(p.reads / p.events),
      api_statements_per_event: bench.database.kind === 'postgres' ? round2(p.statements / p.events - writerStatementsPerEvent) : null,
    });
    const platformFigures = describe(fanout, settings.perRun);
    const baselineFigures = describe(baseline, 1);
    const mb = (bytes: number) => round2(bytes / 2 ** 20);
    const memoryFigures = {
      // 2,000 streams open, after their events, against no stream ever open.
      rss_extra_mb: mb(memory.after!.rss - pristine.rss),
      heap_extra_mb: mb(memory.after!.heap - pristine.heap),
      // The same against just before they opened (after the baseline's streams closed).
      rss_extra_since_closed_mb: mb(memory.after!.rss - memory.before.rss),
      heap_extra_since_closed_mb: mb(memory.after!.heap - memory.before.heap),
      // Open and idle, before any event.
      rss_extra_idle_open_mb: mb(memory.open!.rss - pristine.rss),
      heap_extra_idle_open_mb: mb(memory.open!.heap - pristine.heap),
      rss_none_mb: mb(pristine.rss),
      heap_none_mb: mb(pristine.heap),
    };
    const subjects = [
      sampledResult(
        {
          name: 'platform',
          description: `${platformFigures.streams} SSE streams, ${settings.perRun} per run, on one API process`,
          measures: 'event appended (before its transaction) → a client parsed its frame',
        },
        fanout.latencies,
        { concurrency: platformFigures.streams, wallMs: fanout.wallMs, errors: fanout.dropped },
      ),
      sampledResult(
        { name: 'baseline', description: `${baselineFigures.streams} SSE streams, 1 per run, same runs and event rate`, measures: 'the same' },
        baseline.latencies,
        { concurrency: baselineFigures.streams, wallMs: baseline.wallMs, errors: baseline.dropped },
      ),
    ];
    const [p, b] = subjects;
    return {
      database: platform.databaseKind,
      settings: {
        runs: settings.runs,
        subscribers_per_run: settings.perRun,
        events_per_s: settings.rate,
        duration_s: settings.durationS,
        clients: 'child process (bench/sse-clients.ts), node:http, one socket per stream',
      },
      details: {
        writer: 'appendRunEventsNow (db/run-events.ts), round-robin over the runs',
        writer_statements_per_event: bench.database.kind === 'postgres' ? round2(writerStatementsPerEvent) : null,
        platform: platformFigures,
        baseline: baselineFigures,
        memory: memoryFigures,
        goals: { extra_memory_mb: '< 150', delivery_p99_ms: '<= 100', streams_dropped: 0 },
      },
      subjects,
      ratios: {
        latency_p50: ratio(p!.latency_p50_ms, b!.latency_p50_ms),
        latency_p99: ratio(p!.latency_p99_ms, b!.latency_p99_ms),
        event_log_reads_per_event: ratio(platformFigures.event_log_reads_per_event, baselineFigures.event_log_reads_per_event),
      },
    };
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch((err) => console.error('[bench] cleanup:', err));
  }
}

interface Memory {
  rss: number;
  heap: number;
}

function measureMemory(gc: () => void): Memory {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

/** Every statement sent on a pg connection of this process (the pool's and the LISTEN's), on Postgres. */
function countStatements(kind: string): { count: number; stop(): void } {
  const counter = { count: 0, stop: () => {} };
  if (kind !== 'postgres') return counter;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    counter.count++;
    return original.apply(this, args);
  };
  counter.stop = () => {
    prototype.query = original;
  };
  return counter;
}

/** Appends events round-robin over the runs at `rate` per second for `durationS`. */
async function produce(
  platform: { db: Parameters<typeof appendRunEventsNow>[0] },
  tenantId: string,
  runIds: string[],
  rate: number,
  durationS: number,
): Promise<{ events: number; wallMs: number }> {
  const total = rate * durationS;
  const start = performance.now();
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    while (inFlight >= MAX_APPENDS_IN_FLIGHT) await Promise.race(pending);
    inFlight++;
    const append: Promise<void> = appendRunEventsNow(platform.db, tenantId, runIds[i % runIds.length]!, [
      { type: 'message.delta', data: { delta: '.', sent_at: performance.timeOrigin + performance.now() } },
    ]).then(() => {
      inFlight--;
      pending.delete(append);
    });
    pending.add(append);
  }
  await Promise.all(pending);
  return { events: total, wallMs: performance.now() - start };
}

async function startClients(): Promise<{ ask(command: ClientCommand): Promise<ClientReply>; stop(): Promise<void> }> {
  const script = fileURLToPath(new URL('./sse-clients.js', import.meta.url));
  const child: ChildProcess = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  let waiting: ((reply: ClientReply) => void) | undefined;
  child.on('message', (reply: ClientReply) => waiting?.(reply));
  return {
    ask: (command) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the clients did not answer ${command.cmd}`)), 120_000);
        waiting = (reply) => {
          clearTimeout(timer);
          resolve(reply);
        };
        child.send(command);
      }),
    stop: async () => {
      child.kill();
    },
  };
}

v8.setFlagsFromString('--expose-gc');
