import { expect } from 'chai';
import { closeSharedEmbedder } from '../activities/embedding/index.js';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

describe('memory', function () {
  this.timeout(120_000);
  let key: string;
  let standardKey: string;
  before(async () => {
    ({ key, standardKey } = await newTenant('memory'));
  });

  it('stores, lists and recalls by meaning: a paraphrase ranks above an unrelated text', async () => {
    const stored: Record<string, string> = {};
    for (const content of ['The cat sat on the mat all afternoon.', 'Quarterly revenue grew by five percent.', 'Our office is closed on public holidays.']) {
      const response = await call('POST', '/v1/memory', { key, body: { content } });
      expect(response.status).to.equal(201);
      expect(response.body.memory.id).to.match(/^mem_/);
      stored[content] = response.body.memory.id;
    }
    const listed = await call('GET', '/v1/memory', { key });
    expect(listed.body.memories.map((m: { content: string }) => m.content)).to.have.members(Object.keys(stored));

    const search = await call('POST', '/v1/memory/search', { key, body: { query: 'A feline rested on the rug' } });
    expect(search.status).to.equal(200);
    expect(search.body.hits).to.have.length(3);
    expect(search.body.hits[0]).to.include({ id: stored['The cat sat on the mat all afternoon.'], content: 'The cat sat on the mat all afternoon.' });
    const [best, second] = search.body.hits;
    expect(best.similarity).to.be.greaterThan(second.similarity);
    expect(best.similarity).to.be.within(0, 1);

    const one = await call('POST', '/v1/memory/search', { key, body: { query: 'sales went up', k: 1 } });
    expect(one.body.hits.map((h: { content: string }) => h.content)).to.deep.equal(['Quarterly revenue grew by five percent.']);
  });

  it('defaults k to 5 and bounds it', async () => {
    const { key: own } = await newTenant('memory-k');
    for (let i = 0; i < 7; i++) await call('POST', '/v1/memory', { key: own, body: { content: `fact number ${i}` } });
    expect((await call('POST', '/v1/memory/search', { key: own, body: { query: 'fact' } })).body.hits).to.have.length(5);
    expect((await call('POST', '/v1/memory/search', { key: own, body: { query: 'fact', k: 50 } })).body.hits).to.have.length(7);
    for (const k of [0, 51, 2.5]) expect((await call('POST', '/v1/memory/search', { key: own, body: { query: 'fact', k } })).status, `k=${k}`).to.equal(400);
    expect((await call('POST', '/v1/memory', { key: own, body: {} })).status).to.equal(400);
  });

  it('rewrites with PATCH (management keys only), re-embedding the content', async () => {
    const { body } = await call('POST', '/v1/memory', { key, body: { content: 'The meeting is on Monday.' } });
    const id = body.memory.id;
    expect((await call('PATCH', `/v1/memory/${id}`, { key: standardKey, body: { content: 'x' } })).status).to.equal(403);
    const patched = await call('PATCH', `/v1/memory/${id}`, { key, body: { content: 'The dentist appointment moved to Thursday.' } });
    expect(patched.body.memory).to.include({ id, content: 'The dentist appointment moved to Thursday.' });
    const search = await call('POST', '/v1/memory/search', { key, body: { query: 'when do I see the dentist?', k: 1 } });
    expect(search.body.hits[0].id).to.equal(id);
    expect((await call('PATCH', '/v1/memory/mem_missing', { key, body: { content: 'x' } })).status).to.equal(404);
  });

  it('deletes idempotently', async () => {
    const { body } = await call('POST', '/v1/memory', { key, body: { content: 'temporary' } });
    expect((await call('DELETE', `/v1/memory/${body.memory.id}`, { key })).body).to.deep.equal({ deleted: true, id: body.memory.id });
    expect((await call('DELETE', `/v1/memory/${body.memory.id}`, { key })).body).to.deep.equal({ deleted: false, id: body.memory.id });
    expect((await call('DELETE', '/v1/memory/mem_never', { key })).status).to.equal(200);
  });

  it('answers 502 when the embedder fails, and writes nothing; a PATCH of an unknown id is 404 without embedding', async () => {
    const kept = await call('POST', '/v1/memory', { key, body: { content: 'kept as it is' } });
    const before = (await call('GET', '/v1/memory', { key })).body.memories.length;
    const saved = process.env.EMBEDDING_MODEL_DIR;
    await closeSharedEmbedder();
    process.env.EMBEDDING_MODEL_DIR = '/nonexistent/models';
    try {
      const create = await call('POST', '/v1/memory', { key, body: { content: 'never stored' } });
      expect(create.status).to.equal(502);
      expect(create.body.error.code).to.equal('upstream_error');
      expect(create.body.error.message, 'no server paths in the answer').not.to.match(/nonexistent|\/[a-z]/);
      expect((await call('POST', '/v1/memory/search', { key, body: { query: 'x' } })).status).to.equal(502);
      // An unknown id is looked up before anything is embedded: 404, though the embedder is down.
      const unknown = await call('PATCH', '/v1/memory/mem_missing', { key, body: { content: 'x' } });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('not_found');
      const known = await call('PATCH', `/v1/memory/${kept.body.memory.id}`, { key, body: { content: 'never stored either' } });
      expect(known.status).to.equal(502);
    } finally {
      await closeSharedEmbedder();
      if (saved === undefined) delete process.env.EMBEDDING_MODEL_DIR;
      else process.env.EMBEDDING_MODEL_DIR = saved;
    }
    expect((await call('GET', '/v1/memory', { key })).body.memories.length).to.equal(before);
    const row = await testPlatform().db.selectFrom('memories').select('content').where('id', '=', kept.body.memory.id).executeTakeFirst();
    expect(row?.content).to.equal('kept as it is');
  });

  it('keeps memories to their tenant', async () => {
    const { body } = await call('POST', '/v1/memory', { key, body: { content: 'tenant secret: the vault code is 1234' } });
    const other = await newTenant('memory-other');
    expect((await call('GET', '/v1/memory', { key: other.key })).body.memories).to.deep.equal([]);
    expect((await call('POST', '/v1/memory/search', { key: other.key, body: { query: 'vault code' } })).body.hits).to.deep.equal([]);
    expect((await call('PATCH', `/v1/memory/${body.memory.id}`, { key: other.key, body: { content: 'x' } })).status).to.equal(404);
    expect((await call('DELETE', `/v1/memory/${body.memory.id}`, { key: other.key })).body.deleted).to.equal(false);
    const row = await testPlatform().db.selectFrom('memories').select('content').where('id', '=', body.memory.id).executeTakeFirst();
    expect(row?.content).to.equal('tenant secret: the vault code is 1234');
  });

  it('works inside runs through memory_write and memory_search', async () => {
    const { key: own } = await newTenant('memory-tools');
    const write = await createBuiltinTool(own, 'memory_write');
    const search = await createBuiltinTool(own, 'memory_search');
    const agentId = await publishAgent(own, 'rememberer', scriptedGraph([
      { tool_calls: [{ tool: 'memory_write', arguments: { content: 'The user prefers green tea.' } }] },
      { tool_calls: [{ tool: 'memory_search', arguments: { query: 'favourite drink', k: 1 } }] },
      { text: 'Green tea.' },
    ], [write, search]));
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: own, body: { input: 'remember' } });
    const { steps } = (await call('GET', `/v1/runs/${response.frames[0]!.data.run_id}`, { key: own })).body;
    expect(steps.map((s: { status: string }) => s.status)).to.deep.equal(['completed', 'completed']);
    expect(steps[0].result.id).to.match(/^mem_/);
    expect(steps[1].result.hits[0]).to.include({ id: steps[0].result.id, content: 'The user prefers green tea.' });
    expect((await call('GET', '/v1/memory', { key: own })).body.memories).to.have.length(1);
  });
});
