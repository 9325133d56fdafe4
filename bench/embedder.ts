import {
  createEmbedder,
  EMBEDDING_BATCH_SIZE,
  EMBEDDING_DTYPE,
  EMBEDDING_MAX_TOKENS,
  EMBEDDING_MODEL_ID,
  embeddingModelsRoot,
  missingModelFiles,
} from '../activities/embedding/index.js';
import { embeddingThreadsFromEnv } from '../activities/embedding/config.js';
import { ORIGINAL_MODEL_ID, originalVectors } from './minilm-fp32.js';
import type { BenchmarkResult } from './run.js';
import { printTable, ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { sampleSentences, shuffled, realSentences } from './sentences.js';
import { benchmarkWithSettings } from './with-settings.js';
import { embedAll } from './embed-all.js';

/**
 * The raw embedder: chunks/s of every all-MiniLM-L6-v2 ONNX weight variant installed in the models
 * root (`q8`, `fp32` and `q4` from `npm run fetch-model`, `int8` from `npm run fetch-bench-weights`;
 * any other `onnx/model_<dtype>.onnx` found is measured too; BENCH_EMBEDDER_DTYPES
 * limits them) × pool layout (worker processes × onnxruntime
 * intra-op threads on this machine's cores) × batch size (BENCH_EMBEDDER_BATCHES, default 1,4,16),
 * on BENCH_EMBEDDER_CHUNKS (default 128: whole batches for every layout)
 * texts of ~1,000 characters of real README prose (the size the chunker cuts). Each configuration is a
 * fresh pool, warmed with one batch, then fed calls of one batch, one call per worker in flight (as
 * bench/ingest.ts's raw embedder). The baseline is the configuration of the day before this benchmark
 * existed — q4, 1 worker × 2 threads, batches of 16 — measured first and again last in the same run
 * (its figure is over both, so a change of machine load is bracketed); ratios are chunks/s over it.
 *
 * Retrieval: each variant's top 5 against the float32 original's (the sentence-transformers weights run
 * by bench/minilm-fp32.ts) over a corpus of the memory and knowledge tests' texts plus
 * BENCH_EMBEDDER_CORPUS (default 120) real sentences, for the tests' own queries plus
 * BENCH_EMBEDDER_QUERIES (default 30) other sentences; recall@5 = mean share of fp32's top 5 found.
 */

const CHUNK_CHARS = 1000;
const SEED = 20241124;
const BASELINE = { dtype: 'q4', workers: 1, intraOp: 2, batch: 16 };
const CANDIDATE_DTYPES = ['q4', 'int8', 'uint8', 'q8', 'fp16', 'fp32'];

/** The texts and queries of test/memory.test.ts and test/knowledge.test.ts. */
const TEST_TEXTS = [
  'The cat sat on the mat all afternoon.',
  'Quarterly revenue grew by five percent.',
  'Our office is closed on public holidays.',
  'The meeting is on Monday.',
  'The dentist appointment moved to Thursday.',
  'tenant secret: the vault code is 1234',
  'The user prefers green tea.',
  'Gardening guide > Tomatoes\n\nTomatoes need at least six hours of direct sunlight a day and deep, infrequent watering.',
  'Gardening guide > Roses\n\nPrune roses in late winter, just before new growth begins, cutting above an outward-facing bud.',
  'Visitors park in the north lot behind building C; the south lot is for staff.',
  ...Array.from({ length: 6 }, (_, i) => `Note ${i}: the shipment for order ${i} leaves on day ${i}.`),
  'First document about apples.',
  'Second document about bananas.',
  'The launch code word is pineapple.',
  'Ada Lovelace wrote notes on the Analytical Engine, including an algorithm.',
  'Charles Babbage designed the Analytical Engine in the 1830s.',
  'Charles Babbage was born in London.',
  'Sea otters wrap themselves in kelp to sleep.',
  'Refunds are issued within 14 days of the return arriving at our warehouse.',
];
const TEST_QUERIES = [
  'A feline rested on the rug',
  'sales went up',
  'when do I see the dentist?',
  'vault code',
  'favourite drink',
  'when should I cut back my rose bushes?',
  'where do visitors park?',
  'when does the order ship?',
  'launch code word',
  'Who was Ada Lovelace?',
  'how long do refunds take?',
];

interface Settings {
  chunks: number;
  corpus: number;
  queries: number;
  batches: number[];
}

function settings(): Settings {
  const batches = (process.env.BENCH_EMBEDDER_BATCHES ?? '1,4,16').split(',').map((b) => Number(b.trim()));
  if (batches.some((b) => !Number.isInteger(b) || b < 1)) throw new Error('BENCH_EMBEDDER_BATCHES: positive integers separated by commas');
  return {
    chunks: wholeNumberFromEnv('BENCH_EMBEDDER_CHUNKS', 128, 1),
    corpus: wholeNumberFromEnv('BENCH_EMBEDDER_CORPUS', 120, 5),
    queries: wholeNumberFromEnv('BENCH_EMBEDDER_QUERIES', 30, 0),
    batches,
  };
}

export const embedder = benchmarkWithSettings(
  'embedder',
  settings,
  (s) => `weight variants × pool layouts × batches ${s.batches.join('/')} on ${s.chunks} chunks of ~${CHUNK_CHARS} characters; recall@5 against fp32`,
  runEmbedder,
);

interface Config {
  dtype: string;
  workers: number;
  intraOp: number;
  batch: number;
}

const label = (c: Config) => `${c.dtype} ${c.workers}w×${c.intraOp}t b${c.batch}`;

async function runEmbedder(s: Settings): Promise<BenchmarkResult> {
  const modelsRoot = embeddingModelsRoot();
  const wanted = process.env.BENCH_EMBEDDER_DTYPES?.split(',').map((d) => d.trim()) ?? CANDIDATE_DTYPES;
  const dtypes = CANDIDATE_DTYPES.filter((dtype) => wanted.includes(dtype) && missingModelFiles(modelsRoot, EMBEDDING_MODEL_ID, dtype).length === 0);
  if (!wanted.includes(BASELINE.dtype)) throw new Error(`BENCH_EMBEDDER_DTYPES must include ${BASELINE.dtype}, the baseline's weights`);
  if (!dtypes.includes(BASELINE.dtype)) throw new Error(`the baseline's ${BASELINE.dtype} weights are not installed in ${modelsRoot}: run npm run fetch-model`);
  const chunks = chunkTexts(s.chunks);

  // ---- throughput ----
  const layouts = [
    { workers: 1, intraOp: 2 },
    { workers: 2, intraOp: 1 },
  ];
  const configs: Config[] = [];
  for (const dtype of dtypes) for (const layout of layouts) for (const batch of s.batches) configs.push({ dtype, ...layout, batch });
  const measured = new Map<string, { latencies: number[]; wallMs: number }>();
  const baselineRuns: number[] = [];
  const measure = async (config: Config) => {
    const pool = createEmbedder({ dtype: config.dtype, threads: config.workers, intraOpThreads: config.intraOp, batchSize: config.batch });
    try {
      await pool.embed(chunks.slice(0, config.batch * config.workers));
      const run = await embedAll(pool, chunks, config.batch, config.workers);
      console.log(`[bench] ${label(config)}: ${(chunks.length / (run.wallMs / 1000)).toFixed(1)} chunks/s`);
      return run;
    } finally {
      await pool.close();
    }
  };
  const first = await measure(BASELINE);
  baselineRuns.push(chunks.length / (first.wallMs / 1000));
  for (const config of configs) measured.set(label(config), await measure(config));
  const last = await measure(BASELINE);
  baselineRuns.push(chunks.length / (last.wallMs / 1000));
  const baselineRate = (2 * chunks.length) / ((first.wallMs + last.wallMs) / 1000);

  // ---- retrieval against fp32 ----
  const corpus = [...TEST_TEXTS, ...sampleSentences(s.corpus + s.queries, SEED).slice(0, s.corpus)];
  const queries = [...TEST_QUERIES, ...sampleSentences(s.corpus + s.queries, SEED).slice(s.corpus)];
  console.log(`[bench] fp32 reference: ${corpus.length} texts and ${queries.length} queries (plain JavaScript, slow)...`);
  const reference = await originalVectors(modelsRoot, [...corpus, ...queries]);
  const refTop = topK(reference.slice(corpus.length), reference.slice(0, corpus.length), 5);
  const retrieval: Record<string, { recall_at_5: number; recall_at_5_test_queries: number; min_cosine_to_fp32: number }> = {};
  for (const dtype of dtypes) {
    const pool = createEmbedder({ dtype, threads: 1 });
    try {
      const vectors = await pool.embed([...corpus, ...queries]);
      const top = topK(vectors.slice(corpus.length), vectors.slice(0, corpus.length), 5);
      const recalls = top.map((hits, q) => hits.filter((h) => refTop[q]!.includes(h)).length / 5);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      retrieval[dtype] = {
        recall_at_5: Math.round(mean(recalls) * 1000) / 1000,
        recall_at_5_test_queries: Math.round(mean(recalls.slice(0, TEST_QUERIES.length)) * 1000) / 1000,
        min_cosine_to_fp32: Math.round(Math.min(...vectors.map((v, i) => dot(v, reference[i]!))) * 10000) / 10000,
      };
    } finally {
      await pool.close();
    }
  }

  // ---- report ----
  const rows = configs.map((c) => {
    const run = measured.get(label(c))!;
    return { config: c, rate: chunks.length / (run.wallMs / 1000), run };
  });
  const fastest = [...rows].sort((a, b) => b.rate - a.rate);
  console.log('');
  printTable([
    ['config', 'chunks/s', 'vs baseline', 'recall@5 vs fp32'],
    ['baseline q4 1w×2t b16 (first, last)', `${baselineRuns.map((r) => r.toFixed(1)).join(', ')}`, '1.000x', String(retrieval.q4?.recall_at_5)],
    ...rows.map((r) => [label(r.config), r.rate.toFixed(1), `${ratio(r.rate, baselineRate).toFixed(3)}x`, String(retrieval[r.config.dtype]?.recall_at_5)]),
  ]);
  const best = fastest[0]!;
  const configured = rows.find((r) => r.config.dtype === EMBEDDING_DTYPE && r.config.batch === EMBEDDING_BATCH_SIZE && r.config.workers === embeddingThreadsFromEnv());
  return {
    database: 'none',
    settings: {
      chunks: chunks.length,
      chunk_chars: CHUNK_CHARS,
      max_tokens: EMBEDDING_MAX_TOKENS,
      batches: s.batches,
      layouts,
      dtypes,
      corpus_texts: corpus.length,
      queries: queries.length,
      baseline: BASELINE,
    },
    details: {
      baseline_chunks_per_s: round2(baselineRate),
      baseline_runs_chunks_per_s: baselineRuns.map(round2),
      chunks_per_s: Object.fromEntries(rows.map((r) => [label(r.config), round2(r.rate)])),
      retrieval,
      fastest: label(best.config),
      configured: { dtype: EMBEDDING_DTYPE, batch: EMBEDDING_BATCH_SIZE, workers: embeddingThreadsFromEnv() },
      reference: `${ORIGINAL_MODEL_ID} model.safetensors, float32, bench/minilm-fp32.ts`,
    },
    subjects: [
      sampledResult(
        { name: 'baseline', description: label(BASELINE), measures: 'embed() of one batch → vectors, per call' },
        [...first.latencies, ...last.latencies],
        { concurrency: BASELINE.workers, wallMs: first.wallMs + last.wallMs },
      ),
      ...fastest.slice(0, 1).concat(configured && configured !== best ? [configured] : []).map((r) =>
        sampledResult(
          { name: label(r.config), description: `${r.config.dtype} weights, ${r.config.workers} worker(s) × ${r.config.intraOp} onnxruntime thread(s), batches of ${r.config.batch}`, measures: 'embed() of one batch → vectors, per call' },
          r.run.latencies,
          { concurrency: r.config.workers, wallMs: r.run.wallMs },
        ),
      ),
    ],
    ratios: Object.fromEntries(rows.map((r) => [`chunks_per_s ${label(r.config)}`, ratio(r.rate, baselineRate)])),
  };
}

/** `count` texts of up to CHUNK_CHARS characters of real prose, as the chunker cuts them. */
function chunkTexts(count: number): string[] {
  const pool = shuffled(realSentences(), SEED + 1);
  const texts: string[] = [];
  let cursor = 0;
  while (texts.length < count) {
    let text = '';
    for (;;) {
      const sentence = pool[cursor % pool.length]!;
      if (text && text.length + sentence.length + 1 > CHUNK_CHARS) break;
      text += (text ? ' ' : '') + sentence;
      cursor++;
    }
    texts.push(text);
  }
  return texts;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** For each query, the indexes of the k corpus vectors of highest cosine (vectors are unit length). */
function topK(queries: ArrayLike<number>[], corpus: ArrayLike<number>[], k: number): number[][] {
  return queries.map((q) =>
    corpus
      .map((c, i) => ({ i, score: dot(q, c) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map((h) => h.i),
  );
}
