import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { originalVectors } from '../bench/minilm-fp32.js';
import {
  closeSharedEmbedder,
  createEmbedder,
  EMBEDDING_DIMENSIONS,
  EMBEDDING_DTYPE,
  EMBEDDING_MODEL_ID,
  EMBEDDING_WEIGHTS_SHA256,
  EmbedderUnavailableError,
  embeddingModelsRoot,
  missingModelFiles,
  onnxFileFor,
  REQUIRED_MODEL_FILES,
  sharedEmbedder,
  type WorkerEmbedder,
} from '../activities/embedding/index.js';

/** The real model, installed by `npm run fetch-model` (scripts/fetch-embedder-model.sh). */

const run = promisify(execFile);

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the promise to reject');
}

const topics = [
  'The cat sat on the warm windowsill and watched the birds.',
  'Quarterly revenue grew by twelve percent thanks to cloud subscriptions.',
  'Temporal workflows replay their event history to rebuild state after a crash.',
  'Add two cups of flour and a pinch of salt, then knead the dough for ten minutes.',
  'The goalkeeper saved a penalty in the last minute of extra time.',
];

function sentences(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${topics[i % topics.length]} (${'note '.repeat(i % 7)}#${i})`);
}

describe('embedding: all-MiniLM-L6-v2 (the 8-bit graph) in worker processes', function () {
  let embedder: WorkerEmbedder;

  before(async function () {
    const missing = missingModelFiles(embeddingModelsRoot());
    if (missing.length) {
      throw new Error(`the embedding model is not installed in ${embeddingModelsRoot()} (missing ${missing.join(', ')}): run npm run fetch-model`);
    }
    // Batches of four, not the default one, so that padding, the lanes and batch boundaries are exercised.
    embedder = createEmbedder({ threads: 1, batchSize: 4 });
    await embedder.warmup();
  });

  after(async () => {
    await embedder?.close();
  });

  it('names its model, dtype and dimensions', () => {
    expect(embedder.modelId).to.equal(EMBEDDING_MODEL_ID).and.equal('onnx-community/all-MiniLM-L6-v2-ONNX');
    expect(embedder.dtype).to.equal(EMBEDDING_DTYPE).and.equal('q8');
    expect(embedder.dimensions).to.equal(EMBEDDING_DIMENSIONS).and.equal(384);
  });

  // Short texts, one just under the 256 tokens the model reads, and longer ones that are truncated
  // (sentence-transformers keeps [CLS] … [SEP] around the first 254 word pieces).
  const referenceTexts = [
    'The cat sat on the mat.',
    'Quarterly revenue grew by five percent, driven by subscriptions in Europe.',
    'x',
    'Tomatoes need sunlight. '.repeat(50),
    'Tomatoes need sunlight. '.repeat(90),
    Array.from({ length: 400 }, (_, i) => `token${i}`).join(' '),
  ];

  it("stays within cosine 0.998 of the original's vectors (the sentence-transformers weights run in plain JavaScript), in one padded batch", async function () {
    this.timeout(60_000);
    const [vectors, reference] = await Promise.all([embedder.embed(referenceTexts), originalVectors(embeddingModelsRoot(), referenceTexts)]);
    // 0.9984–0.9997 here (largest difference 0.0104); the same arithmetic without the outlier channels'
    // float32 path gives 0.991–0.998 (0.0215).
    for (const [i, vector] of vectors.entries()) {
      expect(dot(vector, reference[i]!), `cosine of text ${i}`).to.be.greaterThan(0.998);
      expect(maxDifference(vector, reference[i]!), `largest difference, text ${i}`).to.be.lessThan(0.015);
    }
  });

  it("has the float32 graph built beside it compute the original's vectors exactly", async function () {
    this.timeout(60_000);
    const fp32 = createEmbedder({ dtype: 'fp32', threads: 1, batchSize: 4 });
    try {
      const [vectors, reference] = await Promise.all([fp32.embed(referenceTexts), originalVectors(embeddingModelsRoot(), referenceTexts)]);
      for (const [i, vector] of vectors.entries()) {
        expect(dot(vector, reference[i]!), `cosine of text ${i}`).to.be.greaterThan(0.99999);
        expect(maxDifference(vector, reference[i]!), `largest difference, text ${i}`).to.be.lessThan(1e-3);
      }
    } finally {
      await fp32.close();
    }
  });

  it('answers one 384-dimensional unit vector per text, in order', async () => {
    const texts = ['hello world', '', 'Ünïcödé, emoji 🚀 and 中文 text', 'x'.repeat(5000)];
    const vectors = await embedder.embed(texts);
    expect(vectors).to.have.length(texts.length);
    for (const v of vectors) {
      expect(v).to.be.instanceOf(Float32Array);
      expect(v.length).to.equal(384);
      expect(v.every(Number.isFinite)).to.equal(true);
      expect(norm(v)).to.be.closeTo(1, 1e-4);
    }
    expect(await embedder.embed([])).to.deep.equal([]);
  });

  it('is deterministic', async () => {
    const text = 'Deterministic embeddings make vector search reproducible.';
    const [first] = await embedder.embed([text]);
    const [second] = await embedder.embed([text]);
    const [third] = await embedder.embed(['something else first', text]).then((v) => v.slice(1));
    expect(maxDifference(first!, second!)).to.equal(0);
    expect(maxDifference(first!, third!)).to.be.below(1e-5);
  });

  it('ranks a paraphrase above an unrelated sentence by cosine', async () => {
    const [query, paraphrase, unrelated] = await embedder.embed([
      'How do I reset my password?',
      'What are the steps to change a forgotten login password?',
      'The tide comes in twice a day along the northern coast.',
    ]);
    const near = dot(query!, paraphrase!);
    const far = dot(query!, unrelated!);
    expect(near, `paraphrase ${near}, unrelated ${far}`).to.be.above(far + 0.3);
    expect(near).to.be.above(0.5);
  });

  it('gives the same vectors for a batch of 40 as one text at a time', async () => {
    const texts = sentences(40);
    const batched = await embedder.embed(texts);
    const single: Float32Array[] = [];
    for (const text of texts) single.push((await embedder.embed([text]))[0]!);
    batched.forEach((v, i) => expect(maxDifference(v, single[i]!), `text ${i}`).to.be.below(1e-5));
  });

  it('serves concurrent callers from one queue and keeps each answer in order', async () => {
    const texts = sentences(23);
    const expected = await embedder.embed(texts);
    const parts = [texts.slice(0, 1), texts.slice(1, 8), texts.slice(8, 9), texts.slice(9, 23)];
    const answers = await Promise.all(parts.map((part) => embedder.embed(part)));
    answers.flat().forEach((v, i) => expect(maxDifference(v, expected[i]!), `text ${i}`).to.be.below(1e-5));
  });

  it('answers an interactive call before the background texts queued ahead of it', async () => {
    const chunks = sentences(40).map((s) => s.repeat(6)); // ten batches of long texts
    const answered: string[] = [];
    let queuedWhenQueryAnswered = -1;
    const background = embedder.embed(chunks).then(() => answered.push('background'));
    const interactive = embedder.embed(['Where did the cat sit?'], { priority: 'interactive' }).then((vectors) => {
      queuedWhenQueryAnswered = embedder.stats().queued;
      answered.push('interactive');
      return vectors;
    });
    const [[query]] = await Promise.all([interactive, background]);
    expect(answered).to.deep.equal(['interactive', 'background']);
    // Only the batch a worker was already on went first; the rest of the chunks were still waiting.
    expect(queuedWhenQueryAnswered).to.be.at.least(chunks.length - 2 * embedder.batchSize);
    const [alone] = await embedder.embed(['Where did the cat sit?']);
    expect(maxDifference(query!, alone!)).to.be.below(1e-5);
  });

  it('still serves the background while interactive calls keep coming', async () => {
    // One background batch in flight, one waiting; then forty one-text interactive calls (ten batches).
    const background = embedder.embed(sentences(8)).then(() => embedder.stats().queued);
    const queries = sentences(40).map((text) => embedder.embed([text], { priority: 'interactive' }));
    const [queuedWhenBackgroundAnswered] = await Promise.all([background, ...queries]);
    // The waiting background batch went after four interactive ones, not after all ten: when it was
    // answered, the interactive texts of five or six batches were still queued (the pool may already
    // have handed the next one out).
    expect(queuedWhenBackgroundAnswered).to.be.within(40 - 6 * embedder.batchSize, 40 - 4 * embedder.batchSize);
  });

  it('truncates inputs at 256 tokens, as sentence-transformers does', async () => {
    const prefix = Array.from({ length: 300 }, (_, i) => `word${i % 50}`).join(' ');
    const [a, b] = await embedder.embed([`${prefix} the ending is about cats`, `${prefix} a different ending about tax law`]);
    expect(maxDifference(a!, b!)).to.be.below(1e-6);
  });

  it('embeds in another process, so the event loop keeps turning while it works', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const vectors = await embedder.embed(sentences(200));
      expect(vectors).to.have.length(200);
    } finally {
      clearInterval(timer);
    }
    // In-process embedding would hold the event loop for the whole call: not one tick. (How fast it
    // embeds is a benchmark's business, not this test's: npm run bench -- ingest.)
    expect(ticks).to.be.greaterThan(1);
    expect(embedder.stats().pids).to.not.include(process.pid).and.not.be.empty;
  });

  it('spreads batches over several workers with the same results', async function () {
    const pool = createEmbedder({ threads: 2, intraOpThreads: 1 });
    try {
      const texts = sentences(48);
      const [fromPool, fromOne] = await Promise.all([pool.embed(texts), embedder.embed(texts)]);
      fromPool.forEach((v, i) => expect(maxDifference(v, fromOne[i]!), `text ${i}`).to.be.below(1e-5));
      expect(pool.stats()).to.include({ threads: 2, queued: 0, inFlight: 0, crashes: 0 });
      expect(pool.stats().pids).to.have.length(2);
    } finally {
      await pool.close();
    }
  });

  it('rejects what is not an array of strings with a TypeError', async () => {
    expect(await rejectionOf(embedder.embed('text' as unknown as string[]))).to.be.instanceOf(TypeError);
    expect(await rejectionOf(embedder.embed(['ok', 42 as unknown as string]))).to.be.instanceOf(TypeError);
  });

  it('rejects the requests a crashed worker held, and replaces the worker', async () => {
    const pool = createEmbedder({ threads: 1 });
    try {
      await pool.warmup();
      const [pid] = pool.stats().pids;
      const pending = pool.embed(sentences(200));
      const queuedBehind = pool.embed(['queued behind the batch in flight']);
      expect(pool.stats().inFlight).to.be.above(0);
      process.kill(pid!, 'SIGKILL');
      const error = await rejectionOf(pending);
      expect(error).to.be.instanceOf(EmbedderUnavailableError);
      expect(error).to.include({ reason: 'worker_crashed', code: 'embedder_unavailable' });
      expect(error.message).to.contain('SIGKILL');
      // Texts of other requests that were only queued go to the replacement worker.
      const [vector] = await queuedBehind;
      expect(vector!.length).to.equal(384);
      const stats = pool.stats();
      expect(stats).to.include({ ready: 1, crashes: 1 });
      expect(stats.pids).to.have.length(1).and.not.include(pid);
      const [again] = await pool.embed([topics[0]!]);
      const [reference] = await embedder.embed([topics[0]!]);
      expect(maxDifference(again!, reference!)).to.be.below(1e-5);
    } finally {
      await pool.close();
    }
  });

  it('leaves SIGINT and SIGTERM sent to the process group to its parent', async () => {
    const pool = createEmbedder({ threads: 1 });
    try {
      await pool.warmup();
      const [pid] = pool.stats().pids;
      process.kill(pid!, 'SIGINT');
      process.kill(pid!, 'SIGTERM');
      const [vector] = await pool.embed(['still here']);
      expect(vector!.length).to.equal(384);
      expect(pool.stats()).to.include({ crashes: 0 });
      expect(pool.stats().pids).to.deep.equal([pid]);
    } finally {
      await pool.close();
    }
  });

  it('stops its worker processes on close', async () => {
    const pool = createEmbedder();
    await pool.warmup();
    const [pid] = pool.stats().pids;
    await pool.close();
    expect(() => process.kill(pid!, 0)).to.throw(Error, 'ESRCH');
  });

  it('rejects pending and later requests once closed', async () => {
    const pool = createEmbedder();
    const pending = rejectionOf(pool.embed(sentences(20)));
    await pool.close();
    expect(await pending).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'closed' });
    expect(await rejectionOf(pool.embed(['late']))).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'closed' });
    await pool.close();
  });

  it('does not keep a process alive once idle, and its workers exit with it', async () => {
    const index = pathToFileURL(path.resolve('dist/activities/embedding/index.js')).href;
    const script = `
      import { sharedEmbedder } from ${JSON.stringify(index)};
      const [v] = await sharedEmbedder().embed(['hello from a short-lived process']);
      console.log(JSON.stringify({ length: v.length, pids: sharedEmbedder().stats().pids }));
    `;
    const started = performance.now();
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 });
    const { length, pids } = JSON.parse(stdout) as { length: number; pids: number[] };
    expect(length).to.equal(384);
    expect(performance.now() - started).to.be.below(20_000);
    // A worker exits when its IPC channel closes; give a busy machine a few seconds for that.
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pids.filter(alive), 'workers still running').to.deep.equal([]);
  });

  it('shares one lazy embedder per process', async () => {
    const first = sharedEmbedder();
    expect(sharedEmbedder()).to.equal(first);
    await closeSharedEmbedder();
    const second = sharedEmbedder();
    expect(second).to.not.equal(first);
    await closeSharedEmbedder();
  });
});

describe('embedding: missing or broken model files', function () {
  let scratch: string;

  before(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'embedding-test-'));
  });

  after(() => {
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('fails with EmbedderUnavailableError naming `npm run fetch-model` when the model is not installed', async () => {
    const pool = createEmbedder({ modelsRoot: path.join(scratch, 'no-models-here'), allowRemote: false });
    try {
      const error = await rejectionOf(pool.embed(['hello']));
      expect(error).to.be.instanceOf(EmbedderUnavailableError);
      expect(error).to.include({ reason: 'model_missing', name: 'EmbedderUnavailableError' });
      expect(error.message).to.contain('npm run fetch-model').and.contain('no-models-here');
      expect(pool.stats()).to.include({ ready: 0, loading: 0, queued: 0 });
    } finally {
      await pool.close();
    }
  });

  it('fails with load_failed when the weights are corrupt, and tries again on the next request', async () => {
    const root = path.join(scratch, 'corrupt');
    const dir = path.join(root, EMBEDDING_MODEL_ID);
    const installed = path.join(embeddingModelsRoot(), EMBEDDING_MODEL_ID);
    for (const file of REQUIRED_MODEL_FILES) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      if (file.endsWith('.onnx')) fs.writeFileSync(path.join(dir, file), 'not an onnx model');
      else fs.symlinkSync(path.join(installed, file), path.join(dir, file));
    }
    const pool = createEmbedder({ modelsRoot: root, allowRemote: false });
    try {
      const [first, second] = await Promise.all([rejectionOf(pool.embed(['a'])), rejectionOf(pool.embed(['b']))]);
      for (const error of [first, second]) {
        expect(error).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'load_failed' });
        expect(error.message).to.contain('npm run fetch-model');
      }
      const again = await rejectionOf(pool.embed(['c']));
      expect(again).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'load_failed' });
    } finally {
      await pool.close();
    }
  });

  it("refuses another build under the platform's weight file, however well it loads: its vectors would be stored as the current weights'", async () => {
    // The same graph with a doc string appended (protobuf field 6 of ModelProto): a valid model that
    // loads and embeds, and any bytes but the recorded build's are another build.
    const root = path.join(scratch, 'other-build');
    const dir = path.join(root, EMBEDDING_MODEL_ID);
    const installed = path.join(embeddingModelsRoot(), EMBEDDING_MODEL_ID);
    fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
    for (const file of REQUIRED_MODEL_FILES) {
      if (file !== onnxFileFor(EMBEDDING_DTYPE)) fs.symlinkSync(path.join(installed, file), path.join(dir, file));
    }
    const docString = Buffer.from('another build');
    const otherBuild = Buffer.concat([fs.readFileSync(path.join(installed, onnxFileFor(EMBEDDING_DTYPE))), Buffer.from([0x32, docString.length]), docString]);
    fs.writeFileSync(path.join(dir, onnxFileFor(EMBEDDING_DTYPE)), otherBuild);
    const pool = createEmbedder({ modelsRoot: root, allowRemote: false, threads: 1 });
    try {
      const error = await rejectionOf(pool.embed(['a']));
      expect(error).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'load_failed' });
      expect(error.message).to.contain('sha256').and.contain(EMBEDDING_WEIGHTS_SHA256).and.contain('npm run fetch-model');
    } finally {
      await pool.close();
    }
    // The same file as a benchmark's variant (a dtype with no recorded sha256) loads and embeds.
    fs.writeFileSync(path.join(dir, onnxFileFor('uint8')), otherBuild);
    const variant = createEmbedder({ modelsRoot: root, allowRemote: false, threads: 1, dtype: 'uint8' });
    try {
      expect(await variant.embed(['a'])).to.have.length(1);
    } finally {
      await variant.close();
    }
  });
});
