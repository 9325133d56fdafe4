import { performance } from 'node:perf_hooks';
import { CompiledQuery, sql } from 'kysely';
import { cosineDistance, toSql } from 'pgvector/kysely';
import { createEmbedder, EMBEDDING_DIMENSIONS } from '../activities/embedding/index.js';
import { searchKnowledge } from '../activities/knowledge/search.js';
import { tuneVectorSearch } from '../activities/memory/memory.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase, type Db } from '../db/database.js';
import { newId } from '../db/ids.js';
import { migrateToLatest } from '../db/migrate.js';
import { withTenant, type TenantTx } from '../db/tenant-transaction.js';
import { createTenant } from '../db/tenants.js';
import type { BenchmarkResult } from './run.js';
import { median, percentile, printTable, ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { sampleSentences, seededRandom } from './sentences.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * Knowledge vector search on Postgres: the HNSW search `searchKnowledge` runs, beside EXACT search of
 * the same query, at BENCH_SEARCH_CHUNKS chunks (default 100000) — latency (p50/p95) and recall@5.
 * Postgres only (DATABASE_URL): PGlite is not what this figure is about; without DATABASE_URL the
 * benchmark records a skipped result and says why.
 *
 * THE QUERY is the one `searchKnowledge` (activities/knowledge/search.ts) builds for `mode: vector` with no
 * `kb` — chunks joined to their document and knowledge base, `where chunks.tenant_id = $1 order by
 * embedding <=> $q limit 5` — built with the same Kysely calls, inside `withTenant` (tenant
 * role, row-level security, app.tenant_id) after `tuneVectorSearch` (hnsw.ef_search = 100,
 * hnsw.iterative_scan = relaxed_order). EXACT is that query in the same kind of transaction with
 * `set local enable_indexscan = off`: no index-ordered scan is left, so every chunk of the tenant is read
 * (a sequential scan, or a bitmap scan through the document's chunks) and top-N sorted by distance. Before measuring,
 * EXPLAIN must show the first using chunks_embedding_idx (HNSW) and the second not using it, and the
 * real `searchKnowledge` must return the same chunks as the replica for one query. Only the search
 * statement is timed (not BEGIN, the role switch, the settings or COMMIT, which both pay alike); the two
 * run alternately, query by query, so drift in the machine's load hits both. recall@5 = |HNSW top 5 ∩
 * exact top 5| / 5, averaged over the queries.
 *
 * THE VECTORS. Embedding 100k real chunks with the real model takes 30+ minutes on a 2-core machine, so
 * BENCH_SEARCH_REAL sentences (default 2000; real README prose, bench/sentences.ts) are embedded with the
 * real embedder and the rest are SYNTHESIZED from them: each is a real vector plus a random mixture of
 * SYNTH_MIX_COUNT other real vectors (weights uniform in [0, SYNTH_MIX_MAX]) plus a little isotropic
 * Gaussian noise (norm about SYNTH_NOISE), normalized. Mixing real vectors keeps the synthetic ones in
 * the region (and the anisotropy) real embeddings occupy, rather than spreading them uniformly over the
 * sphere, which would make any ANN index look worse than it is; a fixed seed makes them repeatable. The
 * record gives how close they sit to their parents and to real neighbours (`synthetic` in details).
 * This is not a corpus of 100k real chunks: the recall figure is for this mixture; DESIGN.md's figure
 * was measured on real vectors. QUERIES are BENCH_SEARCH_QUERIES (default 100) further real sentences
 * (not among the stored ones), embedded with the real embedder.
 *
 * THE DATA goes straight into the tables of db/schema.ts, in a tenant of its own (`createTenant`) with
 * one knowledge base and one document; the schema is migrated first. To time the HNSW build the way a
 * bulk load builds it, chunks_embedding_idx is dropped before the insert and re-created afterwards with
 * its own definition, under `maintenance_work_mem = '1GB'` (parallel workers per the server's
 * max_parallel_maintenance_workers). At the end the tenant is deleted (cascading to the chunks) and the
 * index rebuilt over whatever rows other tenants have — so point DATABASE_URL at a database meant for
 * benchmarks: while the benchmark runs, other users of that database search without the index.
 */

const K = 5;
const EF_SEARCH = 100;
const SEED = 1234567;
const INSERT_BATCH = 1000;
const WARMUP_QUERIES = 5;
/** How many other real vectors are mixed into each synthetic one, and their largest weight. */
const SYNTH_MIX_COUNT = 3;
const SYNTH_MIX_MAX = 0.8;
/** Norm of the isotropic noise added to each synthetic vector (before normalizing). */
const SYNTH_NOISE = 0.3;
const INDEX_NAME = 'chunks_embedding_idx';
const DEFAULT_INDEX_DEF = `create index ${INDEX_NAME} on chunks using hnsw (embedding vector_cosine_ops)`;

interface SearchSettings {
  chunks: number;
  real: number;
  queries: number;
}

function searchSettings(): SearchSettings {
  const s = {
    chunks: wholeNumberFromEnv('BENCH_SEARCH_CHUNKS', 100_000, 10),
    real: wholeNumberFromEnv('BENCH_SEARCH_REAL', 2000, 10),
    queries: wholeNumberFromEnv('BENCH_SEARCH_QUERIES', 100, 1),
  };
  if (s.real > s.chunks) throw new Error(`BENCH_SEARCH_REAL (${s.real}) must not exceed BENCH_SEARCH_CHUNKS (${s.chunks})`);
  return s;
}

export const search = benchmarkWithSettings(
  'search',
  searchSettings,
  (s) => `${s.chunks} chunks (${s.real} real, ${s.chunks - s.real} synthesized), ${s.queries} queries, HNSW vs exact, k=${K}`,
  runSearch,
);

async function runSearch(settings: SearchSettings): Promise<BenchmarkResult> {
  const recordSettings = {
    chunks: settings.chunks,
    real_vectors: settings.real,
    synthetic_vectors: settings.chunks - settings.real,
    queries: settings.queries,
    k: K,
    ef_search: EF_SEARCH,
    iterative_scan: 'relaxed_order',
    warmup_queries: WARMUP_QUERIES,
    seed: SEED,
    load_generator: { tool: 'sequential queries through Kysely/pg, alternating HNSW and exact', worker_threads: 0 },
  };
  if (!process.env.DATABASE_URL) {
    const reason =
      'DATABASE_URL is not set: this benchmark measures HNSW search on Postgres with pgvector, not PGlite. ' +
      'Set DATABASE_URL to a Postgres database meant for benchmarks (the run drops and rebuilds chunks_embedding_idx there).';
    console.log(`[bench] search: SKIPPED. ${reason}`);
    return { database: 'none', settings: recordSettings, details: { skipped: true, reason }, subjects: [], ratios: {} };
  }

  const cleanup: Array<() => Promise<void>> = [];
  try {
    const database = await openDatabase(databaseConfigFromEnv());
    cleanup.push(() => database.close());
    const db = database.db;
    await migrateToLatest(db);
    const server = await serverFacts(db);
    console.log(`[bench] Postgres ${server.postgres}, pgvector ${server.pgvector}`);

    // ---- vectors: real sentences and queries, embedded ----
    const embedder = createEmbedder();
    cleanup.push(() => embedder.close());
    const sentences = sampleSentences(settings.real + settings.queries, SEED);
    const queryTexts = sentences.slice(0, settings.queries);
    const realTexts = sentences.slice(settings.queries);
    console.log(`[bench] embedding ${realTexts.length} real sentences and ${queryTexts.length} queries...`);
    await embedder.warmup();
    const embedStarted = performance.now();
    const realVectors = await embedder.embed(realTexts);
    const embedMs = performance.now() - embedStarted;
    const queryVectors = await embedder.embed(queryTexts);

    // ---- a tenant, a knowledge base, a document ----
    const { tenant } = await createTenant(db, `bench-search-${new Date().toISOString()}`);
    cleanup.push(async () => {
      console.log('[bench] deleting the benchmark tenant (cascades to its chunks)...');
      await db.deleteFrom('tenants').where('id', '=', tenant.id).execute();
    });
    const kbId = newId('kb');
    const documentId = newId('doc');
    await withTenant(db, tenant.id, async (tx) => {
      await tx.insertInto('knowledge_bases').values({ id: kbId, tenant_id: tenant.id, name: 'bench-search', description: 'search benchmark', graph: null }).execute();
      await tx
        .insertInto('documents')
        .values({
          id: documentId,
          tenant_id: tenant.id,
          kb_id: kbId,
          title: 'bench-search vectors',
          filename: null,
          content_type: null,
          format: 'md',
          size_bytes: 0,
          status: 'ready',
          error: null,
          source: null,
          markdown: null,
          chunk_count: settings.chunks,
        })
        .execute();
    });

    // ---- the index comes off for the bulk load, and back on (timed) after it ----
    const indexDef = (await existingIndexDef(db)) ?? DEFAULT_INDEX_DEF;
    const otherChunks = Number((await sql<{ n: number }>`select count(*)::int as n from chunks where tenant_id <> ${tenant.id}`.execute(db)).rows[0]!.n);
    await sql.raw(`drop index if exists ${INDEX_NAME}`).execute(db);
    // Placed right after the database's close, so (cleanup runs in reverse) it runs once the tenant is
    // gone and before the database closes: the index is back whatever happened.
    // The rebuild leaves no dead entries of the deleted rows in the index (nor a half-built index).
    cleanup.splice(1, 0, async () => {
      console.log(`[bench] rebuilding ${INDEX_NAME} over the remaining rows...`);
      await sql.raw(`drop index if exists ${INDEX_NAME}`).execute(db);
      await sql`vacuum chunks`.execute(db);
      await buildIndex(db, indexDef);
    });

    console.log(`[bench] inserting ${settings.chunks} chunks (${settings.real} real, ${settings.chunks - settings.real} synthesized)...`);
    const synth = new Synthesizer(realVectors, SEED + 1);
    const insertStarted = performance.now();
    for (let start = 0; start < settings.chunks; start += INSERT_BATCH) {
      const end = Math.min(settings.chunks, start + INSERT_BATCH);
      const ids: string[] = [];
      const indexes: number[] = [];
      const contents: string[] = [];
      const embeddings: string[] = [];
      for (let i = start; i < end; i++) {
        ids.push(newId('chk'));
        indexes.push(i);
        if (i < realVectors.length) {
          contents.push(`real: ${realTexts[i]}`);
          embeddings.push(toSql(Array.from(realVectors[i]!))!);
        } else {
          const { vector, parent } = synth.next();
          contents.push(`synthetic #${i} (from real #${parent})`);
          embeddings.push(toSql(Array.from(vector))!);
        }
      }
      await sql`
        insert into chunks (id, tenant_id, kb_id, document_id, index, content, heading_path, embedding, embedding_model, embedding_dtype)
        select t.id, ${tenant.id}, ${kbId}, ${documentId}, t.idx, t.content, '[]'::jsonb, t.emb::vector, ${embedder.modelId}, ${embedder.dtype}
        from unnest(${ids}::text[], ${indexes}::int[], ${contents}::text[], ${embeddings}::text[]) as t(id, idx, content, emb)`.execute(db);
      if (end % 20_000 === 0 || end === settings.chunks) console.log(`[bench]   ${end} / ${settings.chunks}`);
    }
    const insertMs = performance.now() - insertStarted;

    console.log(`[bench] building ${INDEX_NAME} (HNSW) over ${settings.chunks + otherChunks} rows...`);
    const buildMs = await buildIndex(db, indexDef);
    await sql`analyze chunks`.execute(db);
    await sql`analyze documents`.execute(db);
    await sql`analyze knowledge_bases`.execute(db);
    console.log(`[bench] index built in ${(buildMs / 1000).toFixed(1)} s`);

    // ---- the plans, and the replica against the real searchKnowledge ----
    const probe = Array.from(queryVectors[0]!);
    const hnswPlan = await explain(db, tenant.id, probe, false);
    const exactPlan = await explain(db, tenant.id, probe, true);
    if (!hnswPlan.usesIndex) throw new Error(`sanity check: the HNSW query does not use ${INDEX_NAME}:\n${hnswPlan.text}`);
    if (exactPlan.usesIndex) throw new Error(`sanity check: the exact query still uses ${INDEX_NAME}:\n${exactPlan.text}`);
    const viaPlatform = await searchKnowledge(db, embedder, tenant.id, { query: queryTexts[0]!, k: K, mode: 'vector', hops: 1 });
    const viaReplica = await timedSearch(db, tenant.id, probe, false);
    const sameAsPlatform = viaPlatform.map((h) => h.chunk_id).join() === viaReplica.ids.join();
    if (!sameAsPlatform) {
      console.warn(`[bench] note: searchKnowledge and the replica differ for query 0: ${viaPlatform.map((h) => h.chunk_id).join()} vs ${viaReplica.ids.join()}`);
    }

    // ---- measure ----
    console.log(`[bench] warming up (${WARMUP_QUERIES} queries each), then ${queryVectors.length} queries, HNSW and exact alternately...`);
    const queries = queryVectors.map((v) => Array.from(v));
    for (let i = 0; i < Math.min(WARMUP_QUERIES, queries.length); i++) {
      await timedSearch(db, tenant.id, queries[i]!, false);
      await timedSearch(db, tenant.id, queries[i]!, true);
    }
    const hnswMs: number[] = [];
    const exactMs: number[] = [];
    const recalls: number[] = [];
    const top1: number[] = [];
    let exactRealHits = 0;
    let exactHits = 0;
    for (let i = 0; i < queries.length; i++) {
      // Alternate which goes first, so neither always finds the other's pages warm.
      const order = i % 2 === 0 ? [false, true] : [true, false];
      const results: Record<string, Awaited<ReturnType<typeof timedSearch>>> = {};
      for (const exact of order) results[exact ? 'exact' : 'hnsw'] = await timedSearch(db, tenant.id, queries[i]!, exact);
      const hnsw = results.hnsw!;
      const exact = results.exact!;
      hnswMs.push(hnsw.ms);
      exactMs.push(exact.ms);
      const truth = new Set(exact.ids);
      recalls.push(hnsw.ids.filter((id) => truth.has(id)).length / Math.max(1, exact.ids.length));
      top1.push(exact.similarities[0] ?? NaN);
      exactHits += exact.contents.length;
      exactRealHits += exact.contents.filter((c) => c.startsWith('real: ')).length;
    }
    const recall = recalls.reduce((a, b) => a + b, 0) / recalls.length;

    const hnswSubject = sampledResult(
      {
        name: 'hnsw',
        description: `searchKnowledge's query (vector mode, no kb): HNSW ${INDEX_NAME}, ef_search ${EF_SEARCH}, iterative scan relaxed_order, k=${K}, in a tenant transaction`,
        measures: 'the search statement sent → rows returned (transaction set-up excluded)',
      },
      hnswMs,
    );
    const exactSubject = sampledResult(
      {
        name: 'exact',
        description: 'baseline: the same query with enable_indexscan = off: every chunk of the tenant read (no HNSW) and top-N sorted by distance',
        measures: 'the search statement sent → rows returned (transaction set-up excluded)',
      },
      exactMs,
    );
    const sortedTop1 = top1.filter(Number.isFinite).sort((a, b) => a - b);

    console.log('');
    printTable([
      ['search', 'p50 ms', 'p95 ms', 'recall@5'],
      ['hnsw', hnswSubject.latency_p50_ms.toFixed(2), hnswSubject.latency_p95_ms.toFixed(2), recall.toFixed(3)],
      ['exact', exactSubject.latency_p50_ms.toFixed(2), exactSubject.latency_p95_ms.toFixed(2), '1.000'],
      ['speedup (exact/hnsw)', ratio(exactSubject.latency_p50_ms, hnswSubject.latency_p50_ms).toFixed(1) + 'x', ratio(exactSubject.latency_p95_ms, hnswSubject.latency_p95_ms).toFixed(1) + 'x', ''],
    ]);
    console.log(`[bench] HNSW build ${(buildMs / 1000).toFixed(1)} s over ${settings.chunks + otherChunks} rows; insert ${(insertMs / 1000).toFixed(1)} s`);

    return {
      database: database.kind,
      settings: recordSettings,
      details: {
        postgres: server.postgres,
        pgvector: server.pgvector,
        server_settings: server.settings,
        index_definition: indexDef,
        rows_of_other_tenants: otherChunks,
        hnsw_build_s: round2(buildMs / 1000),
        hnsw_build_maintenance_work_mem: '1GB',
        insert_s: round2(insertMs / 1000),
        embed_real_s: round2(embedMs / 1000),
        embed_real_per_s: round2(realVectors.length / (embedMs / 1000)),
        recall_at_5: round2(recall * 1000) / 1000,
        recall_at_5_min: Math.min(...recalls),
        queries_with_full_recall: recalls.filter((r) => r === 1).length,
        plans: { hnsw: hnswPlan.nodes, exact: exactPlan.nodes },
        search_knowledge_matches_replica: sameAsPlatform,
        synthetic: {
          method: `real vector + ${SYNTH_MIX_COUNT} other real vectors weighted U(0, ${SYNTH_MIX_MAX}) + Gaussian noise of norm ~${SYNTH_NOISE}, normalized`,
          cosine_to_parent_p50: round3(synth.parentSimilarityMedian()),
          real_nearest_real_cosine_p50: round3(realNearestNeighbourMedian(realVectors, 300, SEED + 2)),
          exact_top1_similarity_p50: round3(percentile(sortedTop1, 50)),
          exact_top1_similarity_p05: round3(percentile(sortedTop1, 5)),
          exact_hits_real_share: round3(exactRealHits / Math.max(1, exactHits)),
          real_share_of_rows: round3(settings.real / settings.chunks),
        },
      },
      subjects: [hnswSubject, exactSubject],
      ratios: {
        latency_p50: ratio(hnswSubject.latency_p50_ms, exactSubject.latency_p50_ms),
        latency_p95: ratio(hnswSubject.latency_p95_ms, exactSubject.latency_p95_ms),
        speedup_p50_exact_over_hnsw: ratio(exactSubject.latency_p50_ms, hnswSubject.latency_p50_ms),
        speedup_p95_exact_over_hnsw: ratio(exactSubject.latency_p95_ms, hnswSubject.latency_p95_ms),
        recall_at_5: Math.round(recall * 1000) / 1000,
      },
    };
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch((err) => console.error('[bench] cleanup:', err));
  }
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

// ---- the query ----

/** searchKnowledge's nearest-chunks query (vector mode, no kb), built with the same Kysely calls. */
function nearestQuery(tx: TenantTx, tenantId: string, queryVector: number[]) {
  const distance = cosineDistance('chunks.embedding', queryVector).$castTo<number>();
  return tx
    .selectFrom('chunks')
    .innerJoin('documents', 'documents.id', 'chunks.document_id')
    .innerJoin('knowledge_bases', 'knowledge_bases.id', 'chunks.kb_id')
    .select(['chunks.id', 'chunks.content', 'chunks.document_id', 'chunks.heading_path', 'documents.title', 'knowledge_bases.name as kb', distance.as('distance')])
    .where('chunks.tenant_id', '=', tenantId)
    .orderBy(distance)
    .limit(K);
}

/** The transaction searchKnowledge runs its query in; `exact` turns index scans off for it. */
async function inSearchTransaction<T>(db: Db, tenantId: string, exact: boolean, work: (tx: TenantTx) => Promise<T>): Promise<T> {
  return withTenant(db, tenantId, async (tx) => {
    await tuneVectorSearch(tx);
    if (exact) await sql`set local enable_indexscan = off`.execute(tx);
    return work(tx);
  });
}

async function timedSearch(db: Db, tenantId: string, queryVector: number[], exact: boolean) {
  return inSearchTransaction(db, tenantId, exact, async (tx) => {
    const t0 = performance.now();
    const rows = await nearestQuery(tx, tenantId, queryVector).execute();
    const ms = performance.now() - t0;
    return { ms, ids: rows.map((r) => r.id), contents: rows.map((r) => r.content), similarities: rows.map((r) => 1 - Number(r.distance)) };
  });
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** EXPLAIN of the query: whether chunks_embedding_idx is scanned, the plan's nodes, and its text. */
async function explain(db: Db, tenantId: string, queryVector: number[], exact: boolean): Promise<{ usesIndex: boolean; nodes: string[]; text: string }> {
  return inSearchTransaction(db, tenantId, exact, async (tx) => {
    const compiled = nearestQuery(tx, tenantId, queryVector).compile();
    const json = await tx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]));
    const text = await tx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
    const nodes: string[] = [];
    let usesIndex = false;
    const walk = (node: PlanNode, depth: number) => {
      const on = `${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`;
      nodes.push(`${'  '.repeat(depth)}${node['Node Type']}${on}`);
      if (node['Index Name'] === INDEX_NAME) usesIndex = true;
      for (const child of node.Plans ?? []) walk(child, depth + 1);
    };
    walk(json.rows[0]!['QUERY PLAN'][0]!.Plan, 0);
    return { usesIndex, nodes, text: text.rows.map((r) => r['QUERY PLAN']).join('\n') };
  });
}

// ---- the index ----

async function existingIndexDef(db: Db): Promise<string | undefined> {
  const row = await sql<{ indexdef: string }>`select indexdef from pg_indexes where tablename = 'chunks' and indexname = ${INDEX_NAME}`.execute(db);
  return row.rows[0]?.indexdef;
}

/** Builds the index with maintenance_work_mem = 1GB (set for this transaction only); the build time. */
async function buildIndex(db: Db, indexDef: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await sql`set local maintenance_work_mem = '1GB'`.execute(tx);
    const t0 = performance.now();
    await sql.raw(indexDef).execute(tx);
    return performance.now() - t0;
  });
}

async function serverFacts(db: Db) {
  const version = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db);
  const ext = await sql<{ extversion: string }>`select extversion from pg_extension where extname = 'vector'`.execute(db);
  const names = ['shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'max_parallel_maintenance_workers', 'effective_cache_size', 'jit'];
  const settings = await sql<{ name: string; setting: string; unit: string | null }>`select name, setting, unit from pg_settings where name = any(${names}::text[])`.execute(db);
  return {
    postgres: version.rows[0]?.v ?? 'unknown',
    pgvector: ext.rows[0]?.extversion ?? 'not installed',
    settings: Object.fromEntries(settings.rows.map((r) => [r.name, r.unit ? `${r.setting} (${r.unit})` : r.setting])),
  };
}

// ---- synthetic vectors ----

/** Synthetic vectors around the real ones (see the header); a fixed seed gives the same sequence. */
class Synthesizer {
  private readonly random: () => number;
  private readonly parentSimilarities: number[] = [];

  constructor(
    private readonly real: ArrayLike<number>[],
    seed: number,
  ) {
    this.random = seededRandom(seed);
  }

  next(): { vector: Float32Array; parent: number } {
    const dims = EMBEDDING_DIMENSIONS;
    const parent = Math.floor(this.random() * this.real.length);
    const base = this.real[parent]!;
    const v = new Float64Array(dims);
    for (let d = 0; d < dims; d++) v[d] = base[d]!;
    for (let m = 0; m < SYNTH_MIX_COUNT; m++) {
      const other = this.real[Math.floor(this.random() * this.real.length)]!;
      const w = this.random() * SYNTH_MIX_MAX;
      for (let d = 0; d < dims; d++) v[d]! += w * other[d]!;
    }
    const sigma = SYNTH_NOISE / Math.sqrt(dims);
    for (let d = 0; d < dims; d++) v[d]! += sigma * this.gaussian();
    const out = normalized(v);
    if (this.parentSimilarities.length < 10_000) this.parentSimilarities.push(dot(out, base));
    return { vector: out, parent };
  }

  parentSimilarityMedian(): number {
    return this.parentSimilarities.length ? median(this.parentSimilarities) : NaN;
  }

  /** Box–Muller. */
  private gaussian(): number {
    const u = 1 - this.random();
    const v = this.random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

function normalized(v: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(v.length);
  for (let d = 0; d < v.length; d++) out[d] = v[d]! / norm;
  return out;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += a[d]! * b[d]!;
  return sum;
}

/** Median cosine of a sample of real vectors to their nearest other real vector (how dense the real data is). */
function realNearestNeighbourMedian(real: ArrayLike<number>[], sample: number, seed: number): number {
  const random = seededRandom(seed);
  const sims: number[] = [];
  for (let s = 0; s < Math.min(sample, real.length); s++) {
    const i = Math.floor(random() * real.length);
    let best = -Infinity;
    for (let j = 0; j < real.length; j++) if (j !== i) best = Math.max(best, dot(real[i]!, real[j]!));
    sims.push(best);
  }
  return sims.length ? median(sims) : NaN;
}
