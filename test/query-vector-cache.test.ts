import { expect } from 'chai';
import { EMBEDDING_DTYPE, EmbedderUnavailableError, sharedEmbedder, type Embedder } from '../activities/embedding/index.js';
import { QueryVectorCache } from '../activities/embedding/query-vector-cache.js';
import { searchMemory } from '../activities/memory/memory.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';

/** The real embedder, counting the texts that reach it; `as` presents it as other weights (model id, dtype). */
function counting(as: { modelId?: string; dtype?: string } = {}) {
  const real = sharedEmbedder();
  const seen: string[] = [];
  let failNext = false;
  const embedder: Embedder = {
    modelId: as.modelId ?? real.modelId,
    dtype: as.dtype ?? real.dtype,
    dimensions: real.dimensions,
    embed: async (texts, options) => {
      seen.push(...texts);
      if (failNext) {
        failNext = false;
        throw new EmbedderUnavailableError('worker_crashed', 'the embedding worker was killed (test)');
      }
      return real.embed(texts, options);
    },
    close: async () => {},
  };
  return { embedder, seen, failOnce: () => (failNext = true) };
}

describe('query vector cache', function () {
  this.timeout(60_000);

  it("answers a repeated query from the cache with the embedder's own vector", async () => {
    const cache = new QueryVectorCache();
    const { embedder, seen } = counting();
    const first = await cache.vector(embedder, 'tenant-a', 'when do roses need pruning?');
    const again = await cache.vector(embedder, 'tenant-a', 'when do roses need pruning?');
    expect(seen).to.deep.equal(['when do roses need pruning?']);
    expect(again).to.deep.equal(first);
    const [direct] = await sharedEmbedder().embed(['when do roses need pruning?']);
    expect(first).to.deep.equal(Array.from(direct!));
  });

  it('never answers one tenant, or one model, with a vector embedded for another', async () => {
    const cache = new QueryVectorCache();
    const current = counting();
    const other = counting({ dtype: `not-${EMBEDDING_DTYPE}` });
    const renamed = counting({ modelId: 'someone/other-model' });
    await cache.vector(current.embedder, 'tenant-a', 'launch code word');
    await cache.vector(current.embedder, 'tenant-b', 'launch code word');
    expect(current.seen, 'the second tenant embeds for itself').to.have.length(2);
    await cache.vector(other.embedder, 'tenant-a', 'launch code word');
    await cache.vector(renamed.embedder, 'tenant-a', 'launch code word');
    expect(other.seen, 'another dtype embeds again').to.have.length(1);
    expect(renamed.seen, 'another model embeds again').to.have.length(1);
    await cache.vector(current.embedder, 'tenant-b', 'launch code word');
    expect(current.seen, 'each key is cached on its own').to.have.length(2);
    expect(cache.size).to.equal(4);
  });

  it('evicts the least recently used query beyond its capacity, and keeps no long text', async () => {
    const cache = new QueryVectorCache(2, 20);
    const { embedder, seen } = counting();
    for (const text of ['alpha query', 'beta query', 'alpha query', 'gamma query']) await cache.vector(embedder, 't', text);
    expect(seen).to.deep.equal(['alpha query', 'beta query', 'gamma query']);
    await cache.vector(embedder, 't', 'alpha query'); // used more recently than beta: kept
    await cache.vector(embedder, 't', 'beta query'); // evicted by gamma: embedded again
    expect(seen).to.deep.equal(['alpha query', 'beta query', 'gamma query', 'beta query']);
    expect(cache.size).to.equal(2);

    const long = 'a query longer than twenty characters';
    await cache.vector(embedder, 't', long);
    await cache.vector(embedder, 't', long);
    expect(seen.filter((t) => t === long)).to.have.length(2);
    expect(cache.size).to.equal(2);
  });

  it('passes a failure to its caller and does not remember it', async () => {
    const cache = new QueryVectorCache();
    const { embedder, seen, failOnce } = counting();
    failOnce();
    let error: unknown;
    await cache.vector(embedder, 't', 'what ships today?').catch((err: unknown) => (error = err));
    expect(error).to.be.instanceOf(EmbedderUnavailableError);
    expect(cache.size).to.equal(0);
    const vector = await cache.vector(embedder, 't', 'what ships today?');
    expect(vector).to.have.length(384);
    expect(seen).to.deep.equal(['what ships today?', 'what ships today?']);
  });

  it('serves memory searches too: a repeated one finds the same memories without reaching the embedder', async () => {
    const { key, tenantId } = await newTenant('memory-cache');
    expect((await call('POST', '/v1/memory', { key, body: { content: 'The spare key is under the blue flower pot.' } })).status).to.equal(201);
    const { embedder, seen } = counting();
    const query = `where is the spare key? (${Date.now()})`;
    const first = await searchMemory(testPlatform().db, embedder, tenantId, query, 3);
    const again = await searchMemory(testPlatform().db, embedder, tenantId, query, 3);
    expect(seen).to.deep.equal([query]);
    expect(again).to.deep.equal(first);
    expect(first[0]!.content).to.include('blue flower pot');
  });
});
