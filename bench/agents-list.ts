import { isDeepStrictEqual } from 'node:util';
import { CompiledQuery } from 'kysely';
import autocannon from 'autocannon';
import Koa from 'koa';
import pg from 'pg';
import { listen, type RunningHttpServer } from '../api/http-server.js';
import type { DatabaseConfig } from '../db/config.js';
import type { Db } from '../db/database.js';
import { startBenchPlatform } from './bench-platform.js';
import type { Benchmark, BenchmarkResult, BenchSettings, SubjectResult } from './run.js';

/**
 * GET /v1/agents on the real platform, beside a baseline measured in the same run on the same database.
 *
 * The platform (API, workers, Temporal dev server unless TEMPORAL_ADDRESS is set) runs in this process on
 * DATABASE_URL's Postgres, or a throwaway PGlite when it is unset. One workspace gets SEEDED_AGENTS agents
 * through POST /v1/agents; autocannon then loads the list with the workspace's bearer key.
 *
 * THE BASELINE is a bare Koa app (no router, no middleware) with a single route on 127.0.0.1 that runs the
 * same agents SELECT for the workspace — its agents ordered by id, the published version as a subquery,
 * limit 51 — and answers the same JSON body. It skips everything the platform adds around that query:
 * the request id, bearer-key lookup (a query of its own on a cache miss: db/api-key-cache.ts), query
 * validation, and the row-level-security scope: a tenant read (db/tenant-reads.ts), the query alone on a
 * connection that last read for the same workspace, as here. So platform/baseline is the cost of
 * our framework per request. The baseline queries through its own plain `pg` Pool (same size as the
 * platform's) on Postgres, its query a named statement when the platform prepares its statements
 * (db/statement-cache.ts, DATABASE_PREPARED_STATEMENTS); on PGlite, which has one connection per database, it sends the raw SQL
 * through the platform's Kysely handle, which owns that connection. Both serve through api/http-server's
 * listen(), so HTTP server settings are the same. Before measuring, both bodies are checked to be equal.
 * Type parsers are node-postgres' for the whole process, so the baseline's pool reads timestamps with the
 * platform's parser too (db/timestamptz.ts); the platform's own timestamp writer is not the baseline's.
 */

const SEEDED_AGENTS = 20;
/** Slices per subject, alternating (see measureInRounds). */
const ROUNDS = 4;
/** The platform's default page size (api/schemas.ts pageQuery) plus the one row that detects a next page. */
const LIST_LIMIT = 50;

/** The SQL Kysely compiles for listAgents' first page (listAgentsPage in db/agents.ts), parameters in the same order. */
const LIST_AGENTS_SQL =
  'select "agents".*, (select "version" from "agent_versions" where "agent_versions"."agent_id" = "agents"."id" ' +
  'and "status" = $1) as "published_version" from "agents" where "agents"."tenant_id" = $2 order by "agents"."id" limit $3';

interface AgentRow {
  id: string;
  name: string;
  description: string | null;
  published_version: number | null;
  created_at: Date;
  updated_at: Date;
}

export const agentsList: Benchmark = {
  name: 'agents-list',
  run: runAgentsList,
};

async function runAgentsList(settings: BenchSettings): Promise<BenchmarkResult> {
  const cleanup: Array<() => Promise<void>> = [];
  try {
    const bench = await startBenchPlatform('agents');
    cleanup.push(() => bench.stop());
    const { platform, database, workspace } = bench;
    await seedAgents(platform.apiUrl, workspace.apiKey);

    const baseline = await startBaseline(platform.db, database, workspace.tenantId);
    cleanup.push(baseline.close);

    const platformUrl = `${platform.apiUrl}/v1/agents`;
    const baselineUrl = `${baseline.url}/v1/agents`;
    const headers = { authorization: `Bearer ${workspace.apiKey}` };
    const responseBytes = await checkSameBody(platformUrl, headers, baselineUrl);

    const subjects = await measureInRounds(settings, [
      {
        name: 'platform',
        description: 'GET /v1/agents on the platform: request id, key lookup (cached), validation, tenant read (RLS), query',
        url: platformUrl,
        headers,
      },
      {
        name: 'baseline',
        description: 'bare Koa route running the same agents SELECT for the workspace, no auth/validation/RLS',
        url: baselineUrl,
        headers: {},
      },
    ]);
    const [p, b] = subjects as [SubjectResult, SubjectResult];
    return {
      database: platform.databaseKind,
      details: {
        temporal: platform.temporalUiUrl ? 'dev server (in memory)' : 'external',
        seeded_agents: SEEDED_AGENTS,
        response_bytes: responseBytes,
        baseline_db_access: database.kind === 'postgres' ? `own pg Pool, ${database.preparedStatements ? 'prepared' : 'unnamed'} statement` : "raw SQL on the platform's PGlite handle",
        rounds: ROUNDS,
      },
      subjects,
      ratios: {
        requests_per_s: ratio(p.requests_per_s, b.requests_per_s),
        ...(settings.workers > 0 && { requests_per_cpu_s: ratio(b.main_thread_cpu_us_per_request!, p.main_thread_cpu_us_per_request!) }),
        latency_p50: ratio(p.latency_p50_ms, b.latency_p50_ms),
        latency_p99: ratio(p.latency_p99_ms, b.latency_p99_ms),
      },
    };
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch((err) => console.error('[bench] cleanup:', err));
  }
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** a / b to three decimals; NaN when b is 0 (JSON writes it as null). */
function ratio(a: number, b: number): number {
  return b === 0 ? NaN : Math.round((a / b) * 1000) / 1000;
}

async function seedAgents(apiUrl: string, apiKey: string): Promise<void> {
  for (let i = 0; i < SEEDED_AGENTS; i++) {
    const response = await fetch(`${apiUrl}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-agent-${String(i).padStart(2, '0')}` }),
    });
    if (response.status !== 201 && response.status !== 200) {
      throw new Error(`seeding agent ${i}: POST /v1/agents answered ${response.status}: ${await response.text()}`);
    }
  }
}

async function startBaseline(db: Db, database: DatabaseConfig, tenantId: string): Promise<RunningHttpServer> {
  const params = ['published', tenantId, LIST_LIMIT + 1];
  let query: () => Promise<AgentRow[]>;
  let closePool = async () => {};
  if (database.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: database.url, max: database.poolSize });
    // Prepared on each connection as the platform prepares its repeated statements, unless those are off.
    const statement = { name: database.preparedStatements ? 'list_agents' : undefined, text: LIST_AGENTS_SQL, values: params };
    query = async () => (await pool.query<AgentRow>(statement)).rows;
    closePool = () => pool.end();
  } else {
    const compiled = CompiledQuery.raw(LIST_AGENTS_SQL, params);
    query = async () => (await db.executeQuery<AgentRow>(compiled)).rows;
  }

  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'GET' || ctx.path !== '/v1/agents') {
      ctx.status = 404;
      return;
    }
    const rows = await query();
    const items = rows.slice(0, LIST_LIMIT);
    ctx.body = {
      agents: items.map((a) => ({
        id: a.id,
        name: a.name,
        description: a.description,
        published_version: a.published_version,
        created_at: a.created_at.toISOString(),
        updated_at: a.updated_at.toISOString(),
      })),
      next_cursor: rows.length > LIST_LIMIT ? items[items.length - 1]!.id : null,
    };
  });
  const server = await listen(app, '127.0.0.1', 0);
  return {
    ...server,
    close: async () => {
      await server.close();
      await closePool();
    },
  };
}

/** Fails unless both answer 200 with the same JSON, so the two subjects do the same work; returns its size. */
async function checkSameBody(platformUrl: string, headers: Record<string, string>, baselineUrl: string): Promise<number> {
  const [platform, baseline] = await Promise.all([fetch(platformUrl, { headers }), fetch(baselineUrl)]);
  const [platformText, baselineText] = await Promise.all([platform.text(), baseline.text()]);
  if (platform.status !== 200 || baseline.status !== 200) {
    throw new Error(`sanity check: platform answered ${platform.status}, baseline ${baseline.status}: ${platformText} / ${baselineText}`);
  }
  const body = JSON.parse(platformText) as { agents: unknown[] };
  if (!isDeepStrictEqual(body, JSON.parse(baselineText))) {
    throw new Error(`sanity check: the bodies differ:\nplatform: ${platformText}\nbaseline: ${baselineText}`);
  }
  if (body.agents.length !== SEEDED_AGENTS) {
    throw new Error(`sanity check: expected ${SEEDED_AGENTS} agents, got ${body.agents.length}`);
  }
  return Buffer.byteLength(platformText);
}

interface Subject {
  name: string;
  description: string;
  url: string;
  headers: Record<string, string>;
}

/**
 * Each subject is measured in ROUNDS slices of BENCH_DURATION_S / ROUNDS, in the order ABBA ABBA…, so
 * drift in the machine's speed (other tenants of a shared host take 5–40 % of its CPU time, and not
 * evenly) falls on both alike. Latency percentiles are the slices' own, averaged weighted by requests
 * (autocannon's worker threads hand back no histograms to merge), so they are approximate.
 *
 * Both servers run on this process's main thread, so that thread's CPU time per request is a second
 * figure, one that time stolen from the machine moves less. It includes whatever else the thread does
 * meanwhile — the in-process workers' few idle polls, and on PGlite the database itself — and, with
 * BENCH_WORKERS=0, the load generator; it is left out then.
 */
async function measureInRounds(settings: BenchSettings, subjects: [Subject, Subject]): Promise<SubjectResult[]> {
  const optionsOf = (subject: Subject) => ({
    url: subject.url,
    headers: subject.headers,
    connections: settings.connections,
    ...(settings.workers > 0 && { workers: settings.workers }),
  });
  if (settings.warmupS > 0) {
    for (const subject of subjects) {
      console.log(`[bench] ${subject.name}: warming up ${settings.warmupS} s...`);
      await autocannon({ ...optionsOf(subject), duration: settings.warmupS });
    }
  }
  const sliceS = settings.durationS / ROUNDS;
  const slices = subjects.map(() => ({ results: [] as autocannon.Result[], cpuUs: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      console.log(`[bench] ${subjects[i]!.name}: round ${round + 1} of ${ROUNDS}, ${sliceS} s...`);
      const cpuBefore = process.threadCpuUsage();
      const result = await autocannon({ ...optionsOf(subjects[i]!), duration: sliceS });
      const cpu = process.threadCpuUsage(cpuBefore);
      slices[i]!.results.push(result);
      slices[i]!.cpuUs += cpu.user + cpu.system;
    }
  }
  return subjects.map((subject, i) => {
    const { results, cpuUs } = slices[i]!;
    const total = sum(results.map((r) => r.requests.total));
    // autocannon's worker threads hand back aggregated results only, so the slices' latency figures are
    // combined weighted by their requests (max: the highest).
    const weighted = (of: (r: autocannon.Result) => number) => sum(results.map((r) => of(r) * r.requests.total)) / Math.max(1, total);
    return {
      name: subject.name,
      description: subject.description,
      requests_per_s: total / settings.durationS,
      latency_p50_ms: weighted((r) => r.latency.p50),
      latency_p99_ms: weighted((r) => r.latency.p99),
      latency_avg_ms: weighted((r) => r.latency.average),
      latency_max_ms: Math.max(...results.map((r) => r.latency.max)),
      total_requests: total,
      non_2xx: sum(results.map((r) => r.non2xx)),
      errors: sum(results.map((r) => r.errors)),
      timeouts: sum(results.map((r) => r.timeouts)),
      bytes_per_s: sum(results.map((r) => r.throughput.total)) / settings.durationS,
      ...(settings.workers > 0 && { main_thread_cpu_us_per_request: Math.round(cpuUs / Math.max(1, total)) }),
    };
  });
}
