import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunkMarkdown } from '../activities/chunking/index.js';
import { createEmbedder, sharedEmbedder, type WorkerEmbedder } from '../activities/embedding/index.js';
import { startBenchPlatform } from './bench-platform.js';
import { PlatformApi } from './platform-api.js';
import type { BenchmarkResult } from './run.js';
import { median, printTable, ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { shuffled, realSentences } from './sentences.js';
import { benchmarkWithSettings } from './with-settings.js';
import { embedAll } from './embed-all.js';

/**
 * Knowledge ingestion: chunks embedded per second THROUGH THE PLATFORM, beside the raw embedder on the
 * same chunk texts in the same run.
 *
 * PLATFORM. The platform (API, workers, Temporal dev server unless TEMPORAL_ADDRESS is set) runs in this
 * process on DATABASE_URL's Postgres or a throwaway PGlite. A knowledge base is created with
 * POST /v1/knowledge; BENCH_INGEST_DOCS Markdown documents (default 40) of BENCH_INGEST_SECTIONS
 * sections each (default 5; a title, then `##` sections of up to 900 characters of real README prose, see
 * sentences.ts, so each section is one chunk just under the chunker's ~1000-character target) are uploaded with
 * POST /v1/knowledge/{kb}/documents `{title, text}` by BENCH_INGEST_UPLOADERS clients at once (default 1:
 * one document after another; more, as a bulk import would, overlap one upload's HTTP and database work
 * with another's embedding), and GET …/documents/{id} is polled until each is `ready`. Uploads and the polling share the process with the platform, as a client on the same machine
 * would share its cores. Everything the platform does per document is inside the figure: the upload
 * request (JSON, Markdown decoding, the insert; a text this small is chunked, embedded and marked ready
 * within the request, larger uploads go through the `convertDocument` workflow on the `ingest` task queue),
 * chunking, embedding (the process's shared embedder, up to 32 texts per call, batched by the pool), the
 * chunk inserts, and the status updates. Time runs from just before the first
 * upload to the last document's `ready` (its `updated_at`, written by this process's clock); chunks/s =
 * the documents' `chunk_count` sum over that time. One document is ingested first, unmeasured, so the
 * embedding model is loaded and the workflow code warm.
 *
 * RAW EMBEDDER. `createEmbedder()` — a separate pool with the platform's settings (EMBEDDING_THREADS
 * workers, batches of EMBEDDING_BATCH_SIZE) — embeds the very texts the platform embeds: the generated
 * Markdown chunked with `chunkMarkdown`, each chunk prefixed with its heading path as `embedDocument`
 * does (after the run, every document's converted Markdown is read back with `?markdown=true` and must
 * give exactly these texts). After a warm-up, the texts go in calls of one batch (EMBEDDING_BATCH_SIZE
 * texts), one call per worker in flight, so the pool is never idle and never cuts a call: the
 * embedder's own throughput at the platform's batch size. It runs once BEFORE and once AFTER the
 * platform, and its figure is over both, so a change in the machine's load during the run (other
 * processes share the cores) is bracketed; each run's rate is recorded too. The platform's embedder
 * is idle then, and the raw one idle while the platform works (they would share the same cores).
 *
 * Ratio: platform chunks/s over raw chunks/s (below 1: the platform's overhead around the model). It
 * can come out above 1: the platform's pool takes whatever is queued when its worker frees up (often one
 * document's 5 texts), and on CPU smaller batches (less padding) are not slower per text than full ones.
 * The machine's load from other processes moves both figures; compare runs by the ratio.
 *
 * WHERE THE TIME GOES. The platform's calls of its shared embedder are recorded (its `embed` wrapped
 * while the platform runs): calls, texts per call, the share of the wall time the embedder had texts in
 * hand, and its idle time per document (the upload's HTTP and database work around the embedding: a
 * JSON text document is embedded during its POST, so sequential uploads leave the embedder idle for
 * exactly that long between documents).
 */

const POLL_MS = 50;
/** A document not ready this long after its upload counts as a failure of the run. */
const DOCUMENT_TIMEOUT_MS = 15 * 60_000;
const SENTENCE_SEED = 20240601;
/** Most characters of prose per section: with its `## heading`, one chunk of the default ~1000 target. */
const SECTION_CHARS = 900;
const KB_NAME = 'bench-ingest';

interface IngestSettings {
  docs: number;
  sections: number;
  uploaders: number;
}

function ingestSettings(): IngestSettings {
  return {
    docs: wholeNumberFromEnv('BENCH_INGEST_DOCS', 40, 1),
    sections: wholeNumberFromEnv('BENCH_INGEST_SECTIONS', 5, 1),
    uploaders: wholeNumberFromEnv('BENCH_INGEST_UPLOADERS', 1, 1),
  };
}

export const ingest = benchmarkWithSettings(
  'ingest',
  ingestSettings,
  (s) => `${s.docs} Markdown documents of ${s.sections} sections through the platform (${s.uploaders} uploader(s) at once), the raw embedder on the same chunks before and after`,
  runIngest,
);

interface UploadedDoc {
  id: string;
  title: string;
  /** Date.now() just before its POST. */
  sentAt: number;
  readyAt?: number;
  chunks?: number;
}

async function runIngest(settings: IngestSettings): Promise<BenchmarkResult> {
  const docs = generateDocuments(settings.docs + 1, settings.sections);
  const [warmupDoc, ...measuredDocs] = docs as [GeneratedDoc, ...GeneratedDoc[]];

  const cleanup: Array<() => Promise<void>> = [];
  try {
    const bench = await startBenchPlatform('ingest');
    cleanup.push(() => bench.stop());
    const { platform, workspace } = bench;
    const api = new Api(platform.apiUrl, workspace.apiKey);
    await api.json('POST', '/v1/knowledge', { name: KB_NAME, description: 'ingest benchmark' }, [201, 200]);

    // ---- warm-up: one document, unmeasured (model load, workflow code, first inserts) ----
    console.log('[bench] warming up: one document through the platform...');
    const warm = await api.upload(warmupDoc);
    await waitReady(api, [warm]);

    // ---- the chunk texts: as embedDocument makes them from the generated Markdown ----
    const texts = measuredDocs.flatMap((d) => chunkMarkdown(d.text).map((c) => embeddingText(c.headingPath, c.content)));

    // ---- raw embedder, before the platform ----
    const embedder = createEmbedder();
    cleanup.push(() => embedder.close());
    console.log(`[bench] raw embedder (before): warming up, then ${texts.length} chunk texts in batches of ${embedder.batchSize} (${embedder.threads} worker(s))...`);
    await embedder.embed(texts.slice(0, embedder.batchSize));
    const rawBefore = await embedAll(embedder, texts, embedder.batchSize, embedder.threads);

    // ---- platform ----
    const usage = watchEmbedder(sharedEmbedder());
    cleanup.push(async () => void usage.stop());
    console.log(`[bench] platform: uploading ${measuredDocs.length} documents (${texts.length} chunks) and polling until ready...`);
    const t0 = Date.now();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    // In document order whatever the uploaders' interleaving: the check below compares texts in that order.
    const uploaded: UploadedDoc[] = new Array<UploadedDoc>(measuredDocs.length);
    let next = 0;
    const uploader = async () => {
      while (next < measuredDocs.length) {
        const index = next++;
        uploaded[index] = await api.upload(measuredDocs[index]!);
      }
    };
    await Promise.all(Array.from({ length: settings.uploaders }, uploader));
    const uploadMs = performance.now() - started;
    await waitReady(api, uploaded);
    const observedMs = performance.now() - started;
    // This process's own CPU meanwhile (API, workers, the uploaders; not the embedder's process nor Postgres).
    const cpu = process.cpuUsage(cpuBefore);
    const lastReady = Math.max(...uploaded.map((d) => d.readyAt!));
    const platformWallMs = lastReady - t0;
    const platformChunks = uploaded.reduce((sum, d) => sum + d.chunks!, 0);
    const embedderUse = usage.stop(t0, lastReady);

    // ---- the platform embedded the same texts (its converted Markdown, chunked again here) ----
    const platformTexts: string[] = [];
    for (const doc of uploaded) {
      const body = await api.json('GET', `/v1/knowledge/${KB_NAME}/documents/${doc.id}?markdown=true`, undefined, [200]);
      const chunks = chunkMarkdown(String(body.document.markdown ?? ''));
      if (chunks.length !== doc.chunks) throw new Error(`sanity check: document ${doc.id} has ${doc.chunks} chunks on the platform, ${chunks.length} here`);
      platformTexts.push(...chunks.map((c) => embeddingText(c.headingPath, c.content)));
    }
    if (platformTexts.length !== texts.length || platformTexts.some((t, i) => t !== texts[i])) {
      throw new Error(`sanity check: the platform embedded ${platformTexts.length} chunk texts that differ from the ${texts.length} generated here`);
    }

    // ---- raw embedder, after the platform ----
    console.log(`[bench] raw embedder (after): ${texts.length} chunk texts again...`);
    const rawAfter = await embedAll(embedder, texts, embedder.batchSize, embedder.threads);
    const raw = { latencies: [...rawBefore.latencies, ...rawAfter.latencies], wallMs: rawBefore.wallMs + rawAfter.wallMs };
    const rawChunksPerS = (2 * texts.length) / (raw.wallMs / 1000);
    const platformChunksPerS = platformChunks / (platformWallMs / 1000);

    const docLatencies = uploaded.map((d) => d.readyAt! - d.sentAt);
    const platformSubject = sampledResult(
      {
        name: 'platform',
        description: `POST /v1/knowledge/{kb}/documents (Markdown, ${settings.sections} sections) → convertDocument workflow: chunk, embed (shared embedder), insert, ready`,
        measures: 'upload request sent → document ready (its updated_at); completed_per_s = documents per second of wall time from the first upload to the last ready',
      },
      docLatencies,
      { concurrency: uploaded.length, wallMs: platformWallMs },
    );
    const rawSubject = sampledResult(
      {
        name: 'raw-embedder',
        description: `createEmbedder() (${embedder.threads} worker process(es)), the same chunk texts before and after the platform, calls of one batch (${embedder.batchSize} texts)`,
        measures: 'embed() called → vectors returned, per batch; completed_per_s = batches per second of wall time (both runs)',
      },
      raw.latencies,
      { concurrency: embedder.threads, wallMs: raw.wallMs },
    );

    console.log('');
    printTable([
      ['ingest', 'chunks', 'wall s', 'chunks/s'],
      ['platform', String(platformChunks), (platformWallMs / 1000).toFixed(2), platformChunksPerS.toFixed(2)],
      ['raw-embedder (before)', String(texts.length), (rawBefore.wallMs / 1000).toFixed(2), (texts.length / (rawBefore.wallMs / 1000)).toFixed(2)],
      ['raw-embedder (after)', String(texts.length), (rawAfter.wallMs / 1000).toFixed(2), (texts.length / (rawAfter.wallMs / 1000)).toFixed(2)],
      ['raw-embedder (both)', String(2 * texts.length), (raw.wallMs / 1000).toFixed(2), rawChunksPerS.toFixed(2)],
      ['platform/raw', '', '', `${ratio(platformChunksPerS, rawChunksPerS).toFixed(3)}x`],
    ]);

    return {
      database: platform.databaseKind,
      settings: {
        documents: uploaded.length,
        sections_per_document: settings.sections,
        uploaders: settings.uploaders,
        section_prose_chars: SECTION_CHARS,
        poll_interval_ms: POLL_MS,
        embedding_threads: embedder.threads,
        embedding_batch_size: embedder.batchSize,
        embed_document_call_size: 32,
        warmup_documents: 1,
        load_generator: { tool: `fetch (undici), ${settings.uploaders} uploader(s) at once, then polling, in the platform process`, worker_threads: 0 },
      },
      details: {
        temporal: platform.temporalUiUrl ? 'dev server (in memory)' : 'external',
        workers: 'in-process',
        text_source: 'real English sentences from node_modules README.md files and docs/ (bench/sentences.ts)',
        chunks: platformChunks,
        chunk_chars_median: median(texts.map((t) => t.length)),
        platform_chunks_per_s: round2(platformChunksPerS),
        raw_chunks_per_s: round2(rawChunksPerS),
        platform_wall_s: round2(platformWallMs / 1000),
        platform_wall_observed_s: round2(observedMs / 1000),
        upload_requests_s: round2(uploadMs / 1000),
        raw_wall_s: round2(raw.wallMs / 1000),
        raw_before_chunks_per_s: round2(texts.length / (rawBefore.wallMs / 1000)),
        raw_after_chunks_per_s: round2(texts.length / (rawAfter.wallMs / 1000)),
        // Where the platform's time goes: how much of its wall time the shared embedder had texts in hand.
        platform_embedder_busy_share: embedderUse.busyShare,
        platform_embed_calls: embedderUse.calls,
        platform_texts_per_embed_call: embedderUse.textsPerCall,
        platform_embedder_idle_ms_per_document: round2(embedderUse.idleMs / uploaded.length),
        // CPU the embedder shares the cores with: while it is busy, every millisecond of it slows the embedder down.
        platform_process_cpu_ms_per_document: round2((cpu.user + cpu.system) / 1000 / uploaded.length),
        document_latency_note: 'documents are uploaded back to back (by each uploader) and queue for the one embedder, so later ones wait longer',
      },
      subjects: [platformSubject, rawSubject],
      ratios: {
        chunks_per_s: ratio(platformChunksPerS, rawChunksPerS),
        wall_time_per_chunk: ratio(platformWallMs / platformChunks, raw.wallMs / (2 * texts.length)),
      },
    };
  } finally {
    for (const undo of cleanup.reverse()) await undo().catch((err) => console.error('[bench] cleanup:', err));
  }
}

/** What embedDocument (activities/knowledge/search.ts) embeds for a chunk: its heading path, then its content. */
function embeddingText(headingPath: string[], content: string): string {
  return headingPath.length ? `${headingPath.join(' > ')}\n\n${content}` : content;
}

/**
 * Records the platform's calls of the shared embedder (wrapping its `embed`) so the result can say how
 * much of the wall time the embedder was busy and how full its calls were; `stop` unwraps it.
 */
function watchEmbedder(target: WorkerEmbedder) {
  const original = target.embed;
  const spans: Array<[number, number, number]> = [];
  target.embed = async function (this: WorkerEmbedder, texts: string[]) {
    const start = Date.now();
    try {
      return await original.call(this, texts);
    } finally {
      spans.push([start, Date.now(), texts.length]);
    }
  };
  let stopped = false;
  return {
    stop(from = 0, to = Infinity) {
      if (!stopped) target.embed = original;
      stopped = true;
      const inside = spans.filter(([start]) => start >= from && start <= to).sort((a, b) => a[0] - b[0]);
      let busy = 0;
      let end = -Infinity;
      for (const [start, finish] of inside) {
        busy += Math.max(0, finish - Math.max(start, end));
        end = Math.max(end, finish);
      }
      const wall = Number.isFinite(to) ? to - from : 0;
      const texts = inside.reduce((sum, span) => sum + span[2], 0);
      return {
        calls: inside.length,
        textsPerCall: inside.length ? round2(texts / inside.length) : 0,
        busyShare: wall > 0 ? round2(busy / wall) : 0,
        idleMs: Math.max(0, wall - busy),
      };
    },
  };
}


/** Polls the oldest unfinished document until every one is ready; a failed or stuck document fails the run. */
async function waitReady(api: Api, docs: UploadedDoc[]): Promise<void> {
  const pending = [...docs];
  while (pending.length > 0) {
    const doc = pending[0]!;
    const body = await api.json('GET', `/v1/knowledge/${KB_NAME}/documents/${doc.id}`, undefined, [200]);
    const d = body.document as { status: string; error: string | null; chunk_count: number; updated_at: string };
    if (d.status === 'failed') throw new Error(`document ${doc.id} failed: ${d.error}`);
    if (d.status === 'ready') {
      doc.readyAt = Date.parse(d.updated_at);
      doc.chunks = d.chunk_count;
      pending.shift();
      continue;
    }
    if (Date.now() - doc.sentAt > DOCUMENT_TIMEOUT_MS) throw new Error(`document ${doc.id} still ${d.status} after ${DOCUMENT_TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
}

interface GeneratedDoc {
  title: string;
  text: string;
}

/** `count` Markdown documents: a title, then `sections` `##` sections of up to SECTION_CHARS characters of prose. */
function generateDocuments(count: number, sections: number): GeneratedDoc[] {
  const pool = shuffled(realSentences(), SENTENCE_SEED);
  let cursor = 0;
  const nextSentence = () => pool[cursor++ % pool.length]!;
  const docs: GeneratedDoc[] = [];
  for (let i = 0; i < count; i++) {
    const title = `Benchmark document ${i + 1}`;
    const parts = [`# ${title}`];
    for (let s = 0; s < sections; s++) {
      parts.push(`## ${headingFrom(nextSentence())}`);
      let paragraph: string[] = [];
      let chars = 0;
      // Up to SECTION_CHARS: with its heading the section stays under the chunker's ~1000 target.
      for (;;) {
        const sentence = pool[cursor % pool.length]!;
        if (chars > 0 && chars + sentence.length + 1 > SECTION_CHARS) break;
        cursor++;
        paragraph.push(sentence);
        chars += sentence.length + 1;
        if (paragraph.length >= 4) {
          parts.push(paragraph.join(' '));
          paragraph = [];
        }
      }
      if (paragraph.length) parts.push(paragraph.join(' '));
    }
    docs.push({ title, text: parts.join('\n\n') + '\n' });
  }
  return docs;
}

/** A short heading from a sentence's first words. */
function headingFrom(sentence: string): string {
  return sentence.replace(/[.!?]$/, '').split(' ').slice(0, 5).join(' ');
}

class Api extends PlatformApi {
  async upload(doc: GeneratedDoc): Promise<UploadedDoc> {
    const sentAt = Date.now();
    const body = await this.json('POST', `/v1/knowledge/${KB_NAME}/documents`, { title: doc.title, text: doc.text }, [202]);
    return { id: String(body.document.id), title: doc.title, sentAt };
  }
}
