import { performance } from 'node:perf_hooks';
import type { Embedder } from '../activities/embedding/index.js';

/**
 * The raw embedder's own throughput: `texts` in calls of `batchSize`, `lanes` calls in flight (one per
 * pool worker, so the pool is never idle and never cuts a call). Answers each call's latency and the wall time.
 */
export async function embedAll(embedder: Embedder, texts: string[], batchSize: number, lanes: number): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < texts.length) {
      const batch = texts.slice(next, next + batchSize);
      next += batchSize;
      const start = performance.now();
      const vectors = await embedder.embed(batch);
      latencies.push(performance.now() - start);
      if (vectors.length !== batch.length) throw new Error(`the embedder answered ${vectors.length} vectors for ${batch.length} texts`);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { latencies, wallMs: performance.now() - t0 };
}
