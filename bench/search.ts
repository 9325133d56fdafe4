import { performance } from 'node:perf_hooks';
import { CompiledQuery, sql } from 'kysely';
import { toSql } from 'pgvector/kysely';
import { EMBEDDING_DIMENSIONS, EMBEDDING_DTYPE, EMBEDDING_MODEL_ID, sharedEmbedder } from '../activities/embedding/index.js';
import { queryVectors } from '../activities/embedding/query-vector-cache.js';
import { nearestChunks, searchKnowledge } from '../activities/knowledge/search.js';
import { tuneVectorSearch } from '../activities/memory/memory.js';
import type { Db } from '../db/database.js';
import { newId } from '../db/ids.js';
import { withTenant, type TenantTx } from '../db/tenant-transaction.js';
import { createTenant } from '../db/tenants.js';
import { startBenchPlatform } from './bench-platform.js';
import type { BenchmarkResult } from './run.js';
import { median, percentile, printTable, ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { sampleSentences, seededRandom } from './sentences.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * Knowledge search on Postgres at BENCH_SEARCH_CHUNKS chunks (default 100000), end to end and in its
 * parts, all in one run so the parts can be set against the whole (p50/p95/p99 each):
 * - `http`: POST /v1/knowledge/search over real HTTP with the workspace's management key, to the
 *   platform started as `npm start` starts it (bench/bench-platform.ts), query text in, JSON hits out —
 *   authentication, validation, the query's embedding, the tenant transaction and the search; `http_kb`
 *   scoped to the knowledge base by name, `http_graph` in graph mode. These are COLD: the cache of query
 *   vectors (activities/embedding/query-vector-cache.ts) is emptied before each, so every query is
 *   embedded; `http_repeated` is the same request asked a second time (its vector cached), and
 *   `http_small_tenant` the default request by a second workspace of SMALL_TENANT_CHUNKS chunks that
 *   shares the index (its plan and recall are recorded too: its few rows must not be sought by walking
 *   the big workspace's HNSW graph).
 * - `search_knowledge`: the same work in this process without HTTP (cold too).
 * - `embed`: the query's embedding alone, on the embedder the API uses (nothing else queued on it: no
 *   ingestion runs meanwhile, so queueing behind ingestion batches is not in these figures).
 * - `hnsw`: the SQL alone (below), and `exact`, the baseline it is compared with.
 * Each query goes through every subject, in an order that rotates query by query. Postgres only
 * (DATABASE_URL): PGlite is not what this figure is about; without DATABASE_URL the benchmark records
 * a skipped result and says why.
 *
 * THE QUERY is the one `searchKnowledge` (activities/knowledge/search.ts) builds for `mode: vector` with no
 * `kb` — the nearest 5 of `chunks` alone (`where tenant_id = $1 order by embedding <=> $q limit 5`), then
 * joined to their document and knowledge base — built with the same Kysely calls, inside `withTenant` (tenant
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
 * THE DATA goes straight into the tables of db/schema.ts, in the benchmark platform's workspace (a
 * throwaway one on a database that has others), as one knowledge base with one document; the platform
 * migrates the schema when it starts. To time the HNSW build the way a
 * bulk load builds it, chunks_embedding_idx is dropped before the insert and re-created afterwards with
 * its own definition, under `maintenance_work_mem = '1GB'` (parallel workers per the server's
 * max_parallel_maintenance_workers). At the end the knowledge base is deleted (cascading to the chunks) and the
 * index rebuilt over whatever rows other tenants have — so point DATABASE_URL at a database meant for
 * benchmarks: while the benchmark runs, other users of that database search without the index.
 */

const K = 5;
const EF_SEARCH = 100;
const SEED = 1234567;
const INSERT_BATCH = 1000;
/** Chunks of the second, small workspace (real vectors): a tenant whose rows are few in the shared index. */
const SMALL_TENANT_CHUNKS = 200;
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
  (s) => `${s.chunks} chunks (${s.real} real, ${s.chunks - s.real} synthesized), ${s.queries} queries: HTTP end to end, embedding alone, SQL (HNSW vs exact), k=${K}`,
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
    load_generator: {
      tool: 'sequential: SQL through Kysely/pg, embedder calls, and HTTP requests (fetch, keep-alive) from this process to the platform in it, query by query in rotating order',
      worker_threads: 0,
    },
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
    // The platform as `npm start` runs it (migrated database, API, workers); its workspace holds the chunks.
    const bench = await startBenchPlatform('search');
    cleanup.push(() => bench.stop());
    const db = bench.platform.db;
    const tenantId = bench.workspace.tenantId;
    const server = await serverFacts(db);
    console.log(`[bench] Postgres ${server.postgres}, pgvector ${server.pgvector}`);

    // ---- vectors: real sentences and queries, embedded by the embedder the API itself uses ----
    const embedder = sharedEmbedder();
    const sentences = sampleSentences(settings.real + settings.queries, SEED);
    const queryTexts = sentences.slice(0, settings.queries);
    const realTexts = sentences.slice(settings.queries);
    console.log(`[bench] embedding ${realTexts.length} real sentences and ${queryTexts.length} queries...`);
    await embedder.warmup();
    const embedStarted = performance.now();
    const realVectors = await embedder.embed(realTexts);
    const embedMs = performance.now() - embedStarted;
    const queryVectors = await embedder.embed(queryTexts);

    // ---- a knowledge base and a document in the platform's workspace ----
    const kbName = `bench-search-${Date.now()}`;
    const kbId = newId('kb');
    const documentId = newId('doc');
    await withTenant(db, tenantId, async (tx) => {
      await tx.insertInto('knowledge_bases').values({ id: kbId, tenant_id: tenantId, name: kbName, description: 'search benchmark', graph: null }).execute();
      await tx
        .insertInto('documents')
        .values({
          id: documentId,
          tenant_id: tenantId,
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
    // The knowledge base goes whether or not the workspace is a throwaway one (cascades to the chunks).
    cleanup.push(async () => {
      console.log('[bench] deleting the benchmark knowledge base (cascades to its chunks)...');
      await withTenant(db, tenantId, (tx) => tx.deleteFrom('knowledge_bases').where('id', '=', kbId).execute());
    });

    // ---- the index comes off for the bulk load, and back on (timed) after it ----
    const indexDef = (await existingIndexDef(db)) ?? DEFAULT_INDEX_DEF;
    const otherChunks = Number((await sql<{ n: number }>`select count(*)::int as n from chunks where kb_id <> ${kbId}`.execute(db)).rows[0]!.n);
    await sql.raw(`drop index if exists ${INDEX_NAME}`).execute(db);
    // Placed right after the platform's stop, so (cleanup runs in reverse) it runs once the chunks are
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
        select t.id, ${tenantId}, ${kbId}, ${documentId}, t.idx, t.content, '[]'::jsonb, t.emb::vector, ${embedder.modelId}, ${embedder.dtype}
        from unnest(${ids}::text[], ${indexes}::int[], ${contents}::text[], ${embeddings}::text[]) as t(id, idx, content, emb)`.execute(db);
      if (end % 20_000 === 0 || end === settings.chunks) console.log(`[bench]   ${end} / ${settings.chunks}`);
    }
    const insertMs = performance.now() - insertStarted;

    // A small workspace sharing the index: its rows are few among the big one's, which an HNSW scan
    // filtered by tenant would have to walk past (the planner should take its btree index instead).
    const small = await createTenant(db, `bench-search-small-${new Date().toISOString()}`);
    cleanup.push(async () => {
      await db.deleteFrom('tenants').where('id', '=', small.tenant.id).execute();
    });
    const smallKb = newId('kb');
    const smallDoc = newId('doc');
    const smallCount = Math.min(SMALL_TENANT_CHUNKS, realVectors.length);
    await withTenant(db, small.tenant.id, async (tx) => {
      await tx.insertInto('knowledge_bases').values({ id: smallKb, tenant_id: small.tenant.id, name: 'small', description: null, graph: null }).execute();
      await tx
        .insertInto('documents')
        .values({ id: smallDoc, tenant_id: small.tenant.id, kb_id: smallKb, title: 'small', filename: null, content_type: null, format: 'md', size_bytes: 0, status: 'ready', error: null, source: null, markdown: null, chunk_count: smallCount })
        .execute();
      await tx
        .insertInto('chunks')
        .values(
          realVectors.slice(0, smallCount).map((v, i) => ({
            id: newId('chk'),
            tenant_id: small.tenant.id,
            kb_id: smallKb,
            document_id: smallDoc,
            index: i,
            content: `small: ${realTexts[i]}`,
            heading_path: '[]',
            embedding: toSql(Array.from(v))!,
            embedding_model: embedder.modelId,
            embedding_dtype: embedder.dtype,
          })),
        )
        .execute();
    });

    console.log(`[bench] building ${INDEX_NAME} (HNSW) over ${settings.chunks + smallCount + otherChunks} rows...`);
    const buildMs = await buildIndex(db, indexDef);
    await sql`analyze chunks`.execute(db);
    await sql`analyze documents`.execute(db);
    await sql`analyze knowledge_bases`.execute(db);
    console.log(`[bench] index built in ${(buildMs / 1000).toFixed(1)} s`);

    // ---- the plans, and the replica against the real searchKnowledge ----
    const probe = Array.from(queryVectors[0]!);
    const hnswPlan = await explain(db, tenantId, probe, false);
    const exactPlan = await explain(db, tenantId, probe, true);
    if (!hnswPlan.usesIndex) throw new Error(`sanity check: the HNSW query does not use ${INDEX_NAME}:\n${hnswPlan.text}`);
    if (exactPlan.usesIndex) throw new Error(`sanity check: the exact query still uses ${INDEX_NAME}:\n${exactPlan.text}`);
    const kbPlan = await explain(db, tenantId, probe, false, kbId);
    const smallPlan = await explain(db, small.tenant.id, probe, false);
    const viaPlatform = await searchKnowledge(db, embedder, tenantId, { query: queryTexts[0]!, k: K, mode: 'vector', hops: 1 });
    const viaReplica = await timedSearch(db, tenantId, probe, false);
    const sameAsPlatform = viaPlatform.map((h) => h.chunk_id).join() === viaReplica.ids.join();
    if (!sameAsPlatform) {
      console.warn(`[bench] note: searchKnowledge and the replica differ for query 0: ${viaPlatform.map((h) => h.chunk_id).join()} vs ${viaReplica.ids.join()}`);
    }
    // The API must answer with the chunks searchKnowledge finds (same query, same workspace).
    const api = new SearchApi(bench.platform.apiUrl, bench.workspace.apiKey);
    const smallApi = new SearchApi(bench.platform.apiUrl, small.apiKey);
    const viaHttp = await api.search({ query: queryTexts[0]!, k: K });
    if (viaHttp.ids.join() !== viaPlatform.map((h) => h.chunk_id).join()) {
      throw new Error(`sanity check: POST /v1/knowledge/search answered ${viaHttp.ids.join()}, searchKnowledge ${viaPlatform.map((h) => h.chunk_id).join()}`);
    }

    // ---- measure ----
    // Every subject sees every query once, in an order that rotates query by query, so drift in the
    // machine's load hits all alike and none always finds the others' pages (or the embedder) warm.
    const queries = queryVectors.map((v) => Array.from(v));
    const subjects: Array<{ name: string; run: (i: number) => Promise<{ ms: number; ids?: string[] }> }> = [
      { name: 'hnsw', run: (i) => timedSearch(db, tenantId, queries[i]!, false) },
      { name: 'exact', run: (i) => timedSearch(db, tenantId, queries[i]!, true) },
      { name: 'embed', run: (i) => timed(() => embedder.embed([queryTexts[i]!], { priority: 'interactive' })) },
      // Cold: the cache of query vectors is emptied first, so the query is embedded (as a new query is).
      { name: 'search_knowledge', run: (i) => cold(() => timed(() => searchKnowledge(db, embedder, tenantId, { query: queryTexts[i]!, k: K, mode: 'vector', hops: 1 }))) },
      { name: 'http', run: (i) => cold(() => api.search({ query: queryTexts[i]!, k: K })) },
      { name: 'http_kb', run: (i) => cold(() => api.search({ query: queryTexts[i]!, k: K, kb: kbName })) },
      { name: 'http_graph', run: (i) => cold(() => api.search({ query: queryTexts[i]!, k: K, mode: 'graph' })) },
      { name: 'http_small_tenant', run: (i) => cold(() => smallApi.search({ query: queryTexts[i]!, k: K })) },
      // Warm: the same query asked a second time, its vector cached by the first (untimed) ask.
      {
        name: 'http_repeated',
        run: async (i) => {
          await cold(() => api.search({ query: queryTexts[i]!, k: K }));
          return api.search({ query: queryTexts[i]!, k: K });
        },
      },
    ];
    console.log(`[bench] warming up (${WARMUP_QUERIES} queries each), then ${queries.length} queries through ${subjects.length} subjects in rotating order...`);
    // Warm-up on texts that are not measured (the queries' own would warm any cache of query vectors).
    const warmupTexts = sampleSentences(settings.real + settings.queries + WARMUP_QUERIES, SEED).slice(settings.real + settings.queries);
    for (const text of warmupTexts) {
      await embedder.embed([text]);
      await searchKnowledge(db, embedder, tenantId, { query: text, k: K, mode: 'vector', hops: 1 });
      await api.search({ query: text, k: K });
    }
    for (let i = 0; i < Math.min(WARMUP_QUERIES, queries.length); i++) {
      await timedSearch(db, tenantId, queries[i]!, false);
      await timedSearch(db, tenantId, queries[i]!, true);
    }
    const ms: Record<string, number[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
    const recalls: number[] = [];
    const top1: number[] = [];
    let exactRealHits = 0;
    let exactHits = 0;
    for (let i = 0; i < queries.length; i++) {
      const results: Record<string, { ms: number; ids?: string[] }> = {};
      for (let j = 0; j < subjects.length; j++) {
        const subject = subjects[(i + j) % subjects.length]!;
        results[subject.name] = await subject.run(i);
        ms[subject.name]!.push(results[subject.name]!.ms);
      }
      const hnsw = results.hnsw as Awaited<ReturnType<typeof timedSearch>>;
      const exact = results.exact as Awaited<ReturnType<typeof timedSearch>>;
      const truth = new Set(exact.ids);
      recalls.push(hnsw.ids.filter((id) => truth.has(id)).length / Math.max(1, exact.ids.length));
      top1.push(exact.similarities[0] ?? NaN);
      exactHits += exact.contents.length;
      exactRealHits += exact.contents.filter((c) => c.startsWith('real: ')).length;
    }
    const recall = recalls.reduce((a, b) => a + b, 0) / recalls.length;
    // The HTTP answers' recall too: the API must find what the SQL finds (its own query vector, same model).
    const httpRecalls: number[] = [];
    for (let i = 0; i < Math.min(10, queries.length); i++) {
      const exact = await timedSearch(db, tenantId, queries[i]!, true);
      const http = await api.search({ query: queryTexts[i]!, k: K });
      const truth = new Set(exact.ids);
      httpRecalls.push(http.ids.filter((id) => truth.has(id)).length / Math.max(1, exact.ids.length));
    }
    const httpRecall = httpRecalls.reduce((a, b) => a + b, 0) / httpRecalls.length;
    // The small workspace's searches must find its own nearest chunks too.
    const smallRecalls: number[] = [];
    for (let i = 0; i < Math.min(20, queries.length); i++) {
      const exact = await timedSearch(db, small.tenant.id, queries[i]!, true);
      const hnsw = await timedSearch(db, small.tenant.id, queries[i]!, false);
      const truth = new Set(exact.ids);
      smallRecalls.push(hnsw.ids.filter((id) => truth.has(id)).length / Math.max(1, exact.ids.length));
    }
    const smallRecall = smallRecalls.reduce((a, b) => a + b, 0) / smallRecalls.length;

    const statement = 'the search statement sent → rows returned (transaction set-up excluded)';
    const viaHttpMeasures = 'fetch() sent → JSON answer parsed, with the management key (authentication, validation, query embedding, tenant transaction, search, JSON)';
    const described: Record<string, { description: string; measures: string }> = {
      hnsw: {
        description: `SQL alone: searchKnowledge's query (vector mode, no kb): HNSW ${INDEX_NAME}, ef_search ${EF_SEARCH}, iterative scan relaxed_order, k=${K}, in a tenant transaction`,
        measures: statement,
      },
      exact: { description: 'baseline: the same query with enable_indexscan = off: every chunk of the tenant read (no HNSW) and top-N sorted by distance', measures: statement },
      embed: { description: "the query's embedding alone: the API's own embedder (sharedEmbedder) on one query text, nothing else queued", measures: "embed([query], { priority: 'interactive' }) called → vector returned" },
      search_knowledge: { description: 'searchKnowledge in this process (no HTTP): query embedding + tenant transaction + tuning + search', measures: 'call → hits returned' },
      http: { description: 'POST /v1/knowledge/search {query, k} (default vector mode, every knowledge base) over HTTP', measures: viaHttpMeasures },
      http_kb: { description: 'POST /v1/knowledge/search {query, k, kb} (one knowledge base by name: one more transaction for the lookup)', measures: viaHttpMeasures },
      http_graph: { description: "POST /v1/knowledge/search {query, k, mode: 'graph'} (no entities in this workspace: the graph step finds none)", measures: viaHttpMeasures },
      http_small_tenant: {
        description: `POST /v1/knowledge/search {query, k} by a second workspace of ${smallCount} chunks sharing the index with the big one`,
        measures: viaHttpMeasures,
      },
      http_repeated: {
        description: 'POST /v1/knowledge/search {query, k} for a query asked just before: its vector comes from the cache of query vectors (query-vector-cache.ts), not the embedder',
        measures: `${viaHttpMeasures}; the first ask is not timed`,
      },
    };
    const results = Object.fromEntries(subjects.map((s) => [s.name, sampledResult({ name: s.name, ...described[s.name]! }, ms[s.name]!)]));
    const hnswSubject = results.hnsw!;
    const exactSubject = results.exact!;
    const httpSubject = results.http!;
    const embedSubject = results.embed!;
    const inProcess = results.search_knowledge!;
    const sortedTop1 = top1.filter(Number.isFinite).sort((a, b) => a - b);

    console.log('');
    printTable([
      ['search', 'p50 ms', 'p95 ms', 'p99 ms'],
      ...Object.values(results).map((r) => [r.name, r.latency_p50_ms.toFixed(2), r.latency_p95_ms.toFixed(2), r.latency_p99_ms.toFixed(2)]),
    ]);
    console.log(`[bench] recall@5 ${recall.toFixed(3)} (HTTP answers: ${httpRecall.toFixed(3)} on ${httpRecalls.length} queries; small workspace: ${smallRecall.toFixed(3)})`);
    console.log(`[bench] small workspace's plan: ${smallPlan.nodes.join(' / ')}`);
    console.log(`[bench] HNSW build ${(buildMs / 1000).toFixed(1)} s over ${settings.chunks + otherChunks} rows; insert ${(insertMs / 1000).toFixed(1)} s`);

    return {
      database: bench.database.kind,
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
        embedder: embedderFacts(embedder),
        recall_at_5: round2(recall * 1000) / 1000,
        recall_at_5_min: Math.min(...recalls),
        recall_at_5_http: round3(httpRecall),
        recall_at_5_small_tenant: round3(smallRecall),
        small_tenant_chunks: smallCount,
        queries_with_full_recall: recalls.filter((r) => r === 1).length,
        plans: { hnsw: hnswPlan.nodes, exact: exactPlan.nodes, hnsw_one_kb: kbPlan.nodes, small_tenant: smallPlan.nodes },
        // EXPLAIN (ANALYZE, BUFFERS) of the first query, cold-ish (right after the build and ANALYZE).
        plans_analyzed: { hnsw: hnswPlan.analyzed, hnsw_one_kb: kbPlan.analyzed, small_tenant: smallPlan.analyzed },
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
      subjects: Object.values(results),
      ratios: {
        latency_p50: ratio(hnswSubject.latency_p50_ms, exactSubject.latency_p50_ms),
        latency_p95: ratio(hnswSubject.latency_p95_ms, exactSubject.latency_p95_ms),
        speedup_p50_exact_over_hnsw: ratio(exactSubject.latency_p50_ms, hnswSubject.latency_p50_ms),
        speedup_p95_exact_over_hnsw: ratio(exactSubject.latency_p95_ms, hnswSubject.latency_p95_ms),
        recall_at_5: Math.round(recall * 1000) / 1000,
        // End to end against its parts, measured in the same run: > 1 is what HTTP, auth, validation,
        // transactions and JSON add to embedding + SQL.
        http_over_embed_plus_sql_p50: ratio(httpSubject.latency_p50_ms, embedSubject.latency_p50_ms + hnswSubject.latency_p50_ms),
        http_over_embed_plus_sql_p95: ratio(httpSubject.latency_p95_ms, embedSubject.latency_p95_ms + hnswSubject.latency_p95_ms),
        http_over_in_process_p50: ratio(httpSubject.latency_p50_ms, inProcess.latency_p50_ms),
        http_over_sql_p95: ratio(httpSubject.latency_p95_ms, hnswSubject.latency_p95_ms),
        http_repeated_over_http_p50: ratio(results.http_repeated!.latency_p50_ms, httpSubject.latency_p50_ms),
        http_p95_over_goal_30ms: ratio(httpSubject.latency_p95_ms, 30),
      },
    };
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch((err) => console.error('[bench] cleanup:', err));
  }
}

/** Runs `work` with the cache of query vectors empty, so its query is embedded. */
function cold<T>(work: () => Promise<T>): Promise<T> {
  queryVectors.clear();
  return work();
}

async function timed(work: () => Promise<unknown>): Promise<{ ms: number }> {
  const t0 = performance.now();
  await work();
  return { ms: performance.now() - t0 };
}

function embedderFacts(embedder: ReturnType<typeof sharedEmbedder>) {
  return { model: embedder.modelId, dtype: embedder.dtype, workers: embedder.threads, batch_size: embedder.batchSize, queued_during_measurement: 'nothing else (no ingestion runs during the benchmark)' };
}

/** POST /v1/knowledge/search with the workspace's management key, timed from send to parsed answer. */
class SearchApi {
  constructor(
    private readonly url: string,
    private readonly key: string,
  ) {}

  async search(body: { query: string; k: number; kb?: string; mode?: 'vector' | 'graph' }): Promise<{ ms: number; ids: string[] }> {
    const t0 = performance.now();
    const response = await fetch(`${this.url}/v1/knowledge/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const ms = performance.now() - t0;
    if (response.status !== 200) throw new Error(`POST /v1/knowledge/search answered ${response.status}: ${text}`);
    const { hits } = JSON.parse(text) as { hits: Array<{ chunk_id: string }> };
    return { ms, ids: hits.map((h) => h.chunk_id) };
  }
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

// ---- the query ----

/** searchKnowledge's nearest-chunks query (vector mode), on the weights the chunks were loaded with. */
function nearestQuery(tx: TenantTx, tenantId: string, queryVector: number[], kbId?: string) {
  return nearestChunks(tx, { modelId: EMBEDDING_MODEL_ID, dtype: EMBEDDING_DTYPE }, tenantId, queryVector, K, kbId);
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
async function explain(
  db: Db,
  tenantId: string,
  queryVector: number[],
  exact: boolean,
  kbId?: string,
): Promise<{ usesIndex: boolean; nodes: string[]; text: string; analyzed: string[] }> {
  return inSearchTransaction(db, tenantId, exact, async (tx) => {
    const compiled = nearestQuery(tx, tenantId, queryVector, kbId).compile();
    const json = await tx.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]));
    const text = await tx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
    const analyzed = await tx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain (analyze, buffers) ${compiled.sql}`, [...compiled.parameters]));
    const nodes: string[] = [];
    let usesIndex = false;
    const walk = (node: PlanNode, depth: number) => {
      const on = `${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`;
      nodes.push(`${'  '.repeat(depth)}${node['Node Type']}${on}`);
      if (node['Index Name'] === INDEX_NAME) usesIndex = true;
      for (const child of node.Plans ?? []) walk(child, depth + 1);
    };
    walk(json.rows[0]!['QUERY PLAN'][0]!.Plan, 0);
    return { usesIndex, nodes, text: text.rows.map((r) => r['QUERY PLAN']).join('\n'), analyzed: analyzed.rows.map((r) => r['QUERY PLAN'].replace(/'\[[^\]]*\]'::vector/g, "'[the query vector]'::vector")) };
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
