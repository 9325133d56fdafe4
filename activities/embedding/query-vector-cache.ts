import type { Embedder } from './index.js';

/**
 * The last few thousand query vectors of this process, so a repeated search (an experiment re-running
 * its dataset, an agent asking the same thing again, a user paging through answers) skips the
 * embedder: a short query costs 5–20 ms there against microseconds here (bench/search.ts measures both).
 *
 * A vector depends only on the text and the weights, yet the key also holds the tenant: with one cache
 * for all, a tenant could tell from the answer's speed that another one searched the same words. The
 * model id and dtype are in it so a change of weights never answers with a vector of the old ones.
 * Only finished vectors are kept: each miss goes to its caller's own embedder, so a failure reaches that
 * caller through its own error mapping (the API's 502) and is never remembered. Long texts are not kept
 * (a query may be 20,000 characters; the cache stays under ~10 MB: 2,000 × (3 KB + ≤ 1,000 chars)).
 */
export class QueryVectorCache {
  private readonly entries = new Map<string, number[]>();

  constructor(
    readonly capacity = 2000,
    readonly maxTextLength = 1000,
  ) {}

  /** The query's vector as a plain array (what pgvector's helpers take; do not modify it): cached, or embedded. */
  async vector(embedder: Embedder, tenantId: string, text: string): Promise<number[]> {
    if (text.length > this.maxTextLength || this.capacity === 0) return embedOne(embedder, text);
    const key = `${tenantId}\u0000${embedder.modelId}\u0000${embedder.dtype}\u0000${text}`;
    const cached = this.entries.get(key);
    if (cached) {
      // Most recently used last: a Map keeps insertion order, so its first key is the one to evict.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const vector = await embedOne(embedder, text);
    this.entries.set(key, vector);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return vector;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

async function embedOne(embedder: Embedder, text: string): Promise<number[]> {
  const [vector] = await embedder.embed([text], { priority: 'interactive' });
  return Array.from(vector!);
}

/**
 * The process's one cache, shared by knowledge and memory searches (the API's and the agents' tools);
 * exported for the search benchmark, which empties it for its cold figures.
 */
export const queryVectors = new QueryVectorCache();
