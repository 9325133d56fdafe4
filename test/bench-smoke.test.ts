import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { testPlatform } from './support/global.js';
import { postgresBinDirOrSkip, startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.js';

const run = promisify(execFile);
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
  BENCH_EXP_CANCEL_DELAY_MS: '300',
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

describe('npm run bench', function () {
  this.timeout(600_000);
  let cluster: PostgresCluster | undefined;
  let resultsDir: string | undefined;

  afterEach(async () => {
    await cluster?.destroy();
    if (resultsDir) fs.rmSync(resultsDir, { recursive: true, force: true });
  });

  it('runs every benchmark to its end and writes its result, with no failed sample', async function () {
    resultsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-bench-smoke-'));
    const env: NodeJS.ProcessEnv = { ...process.env, ...TINY, BENCH_RESULTS_DIR: resultsDir };
    // The conversion benchmark would install markitdown from PyPI; without its corpus it records a skip.
    env.BENCH_CORPUS_DIR = path.join(resultsDir, 'no-corpus');
    if (testPlatform().databaseKind === 'postgres') {
      // A server of its own: the benchmarks' workers archive whatever run histories their database has queued.
      cluster = await startPostgresCluster(await postgresBinDirOrSkip(this));
      env.DATABASE_URL = cluster.url;
    } else {
      delete env.DATABASE_URL;
    }
    delete env.TEMPORAL_ADDRESS;

    await run(process.execPath, [BENCH], { env, maxBuffer: 64 * 1024 * 1024 });

    const records = fs.readdirSync(resultsDir).map((file) => JSON.parse(fs.readFileSync(path.join(resultsDir!, file), 'utf8')));
    expect(records.map((r) => r.benchmark)).to.have.members(BENCHMARKS);
    for (const record of records) {
      expect(record.database, record.benchmark).to.be.oneOf(['postgres', 'pglite', 'none']);
      expect(record.ratios, record.benchmark).to.be.an('object');
      for (const subject of record.subjects) expect(subject.errors ?? 0, `${record.benchmark}: ${subject.name}`).to.equal(0);
    }
    const skipped = (name: string) => records.find((r) => r.benchmark === name).skipped === true;
    expect(skipped('conversion'), 'conversion without its corpus').to.equal(true);
    // Search is Postgres-only (pgvector's HNSW); on PGlite it records a skip.
    expect(skipped('search'), 'search').to.equal(testPlatform().databaseKind !== 'postgres');
    expect(records.filter((r) => r.benchmark !== 'conversion' && r.benchmark !== 'search').every((r) => !r.skipped)).to.equal(true);
  });
});
