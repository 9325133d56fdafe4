import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { testPlatform } from './support/global.js';
import { postgresBinDirOrSkip, startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.js';

const BENCH = path.resolve('dist/bench/run.js');
const BENCHMARKS = ['agents-list', 'runs', 'ingest', 'embedder', 'search', 'conversion', 'experiments', 'subagents', 'sse-fanout'];

/**
 * Every benchmark at the smallest sizes its settings take: what it measures is not checked here (the
 * figures mean nothing at these sizes), only that `npm run bench` runs each to its end and records it.
 * Nothing else runs `npm run bench`, and one benchmark broken by a change elsewhere (the experiments
 * one waited for the history archiver, which never ends, to stop) failed the whole command unseen.
 */
const TINY: Record<string, string> = {
  BENCH_DURATION_S: '1',
  BENCH_WARMUP_S: '0',
  BENCH_CONNECTIONS: '2',
  BENCH_RUNS: '2',
  BENCH_RUN_TOTAL: '4',
  BENCH_RUN_CONCURRENCY: '2',
  BENCH_ANSWERS: '1',
  BENCH_RUN_WARMUP: '1',
  BENCH_INGEST_DOCS: '2',
  BENCH_INGEST_SECTIONS: '2',
  BENCH_EMBEDDER_CHUNKS: '4',
  BENCH_EMBEDDER_CORPUS: '6',
  BENCH_EMBEDDER_QUERIES: '2',
  BENCH_EMBEDDER_BATCHES: '1',
  // Fewer chunks and the planner scans instead of using the HNSW index, which the benchmark refuses.
  BENCH_SEARCH_CHUNKS: '5000',
  BENCH_SEARCH_REAL: '20',
  BENCH_SEARCH_QUERIES: '3',
  BENCH_EXP_CELLS: '4',
  BENCH_EXP_ROUNDS: '1',
  BENCH_EXP_CANCEL_SAMPLES: '1',
  // Well past the benchmark's own 300 ms settle: a cancel must reach its run before the scripted turn ends.
  BENCH_EXP_CANCEL_DELAY_MS: '1500',
  BENCH_EXP_BIG_CASES: '4',
  BENCH_EXP_BIG_VARIANTS: '1',
  BENCH_EXP_GET_SAMPLES: '2',
  BENCH_EXP_WARMUP: '1',
  BENCH_SUBAGENT_ROUNDS: '1',
  BENCH_SSE_RUNS: '2',
  BENCH_SSE_PER_RUN: '2',
  BENCH_SSE_RATE: '10',
  BENCH_SSE_DURATION_S: '1',
};

/**
 * What the benchmarks get of the test process's environment: where things are (tools, caches, the
 * embedder's weights, the Temporal CLI), nothing that tunes the platform or the benchmarks, which run
 * with their defaults and TINY. A list of what to pass, not of what to keep back: a tuning setting added
 * later stays out without anyone remembering it here, and a location missing from it fails loudly.
 */
const PASSED = /^(PATH|HOME|USER|LOGNAME|SHELL|TERM|LANG|LC_[A-Z]+|TZ|TMPDIR|XDG_[A-Z_]+|CI|EMBEDDING_MODEL_DIR|TEMPORAL_CLI_PATH|PYTHON)$/;

/** Below the test's own timeout, so a stalled benchmark is killed and its log shown, not orphaned. */
const BENCH_TIMEOUT_MS = 540_000;

describe('npm run bench', function () {
  this.timeout(600_000);
  let cluster: PostgresCluster | undefined;
  let workDir: string | undefined;

  afterEach(async function () {
    await cluster?.destroy();
    // A failed run's folder (its log and results) stays for whoever reads the failure.
    if (workDir && this.currentTest?.state === 'passed') fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('runs every benchmark to its end and writes its result, with no failed sample', async function () {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-bench-smoke-'));
    const resultsDir = path.join(workDir, 'results');
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => PASSED.test(name)));
    Object.assign(env, TINY, { BENCH_RESULTS_DIR: resultsDir });
    // The conversion benchmark would install markitdown from PyPI; without its corpus it records a skip.
    env.BENCH_CORPUS_DIR = path.join(workDir, 'no-corpus');
    // Without DATABASE_URL (not passed on) the benchmarks run on PGlite, as this pass does.
    if (testPlatform().databaseKind === 'postgres') {
      // A server of its own: the benchmarks' workers archive whatever run histories their database has queued.
      cluster = await startPostgresCluster(await postgresBinDirOrSkip(this));
      env.DATABASE_URL = cluster.url;
    }

    const logFile = path.join(workDir, 'bench.log');
    const exit = await runBench(env, logFile);
    expect(exit, `npm run bench ended ${exit}; its output:\n${tail(logFile)}`).to.equal('exit 0');

    const records = fs.readdirSync(resultsDir).map((file) => JSON.parse(fs.readFileSync(path.join(resultsDir, file), 'utf8')));
    expect(records.map((r) => r.benchmark)).to.have.members(BENCHMARKS);
    const skipped = (name: string) => records.find((r) => r.benchmark === name).skipped === true;
    expect(skipped('conversion'), 'conversion without its corpus').to.equal(true);
    // Search is Postgres-only (pgvector's HNSW); on PGlite it records a skip.
    expect(skipped('search'), 'search').to.equal(testPlatform().databaseKind !== 'postgres');
    for (const record of records.filter((r) => !r.skipped)) {
      expect(record.database, record.benchmark).to.be.oneOf(['postgres', 'pglite', 'none']);
      expect(record.ratios, record.benchmark).to.be.an('object');
      expect(record.subjects, record.benchmark).to.not.be.empty;
      for (const subject of record.subjects) {
        const name = `${record.benchmark}: ${subject.name}`;
        // Sampled subjects count their samples and errors; load-tested ones (autocannon) their requests, non-2xx answers and timeouts.
        expect(subject.samples ?? subject.total_requests, name).to.be.greaterThan(0);
        expect([subject.errors ?? 0, subject.non_2xx ?? 0, subject.timeouts ?? 0], name).to.deep.equal([0, 0, 0]);
      }
    }
  });
});

/** `node dist/bench/run.js` in a process group of its own, its output to `logFile`: how it ended. */
function runBench(env: NodeJS.ProcessEnv, logFile: string): Promise<string> {
  const log = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [BENCH], { env, stdio: ['ignore', log, log], detached: true });
  fs.closeSync(log);
  return new Promise((resolve, reject) => {
    // The whole group: the benchmarks' Temporal dev servers and embedder workers are its children.
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BENCH_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `killed (${signal}) after ${BENCH_TIMEOUT_MS} ms at most` : `exit ${code}`);
    });
  });
}

function tail(file: string): string {
  return fs.readFileSync(file, 'utf8').split('\n').slice(-60).join('\n');
}
