import { decodeTimeoutType } from '@temporalio/common';
import { expect } from 'chai';
import { sql } from 'kysely';
import { toSql } from 'pgvector/kysely';
import { createEmbedder, EMBEDDING_DTYPE, EMBEDDING_MODEL_ID, sharedEmbedder, type WorkerEmbedder } from '../activities/embedding/index.js';
import { embeddingText } from '../activities/knowledge/search.js';
import { writeMemory } from '../activities/memory/memory.js';
import { hasVectorsEmbeddedOtherwise, reembedBatch } from '../activities/embedding/reembed.js';
import { findChunksEmbeddedOtherwise, replaceChunkEmbedding } from '../db/chunks.js';
import { findMemoriesEmbeddedOtherwise, replaceMemoryEmbedding } from '../db/memories.js';
import {
  reembedBatchTaskQueue,
  REEMBED_START,
  REEMBED_VECTORS_TASK_QUEUE,
  REEMBED_VECTORS_WORKFLOW_TYPE,
  reembedVectorsInput,
  reembedVectorsWorkflowId,
} from '../workflows/reembed-vectors-api.js';
import type { reembedVectors } from '../workflows/reembed-vectors.js';
import { call, newTenant } from './support/api.js';
import { settledDocument } from './support/documents.js';
import { testPlatform, testWorkerPool } from './support/global.js';

/** Weights the platform ran before (q4, then int8): what an upgraded installation's stored vectors were made by. */
const OLD_DTYPE = 'q4';
const CURRENT = { embedding_model: EMBEDDING_MODEL_ID, embedding_dtype: EMBEDDING_DTYPE };

const MEMORIES = ['The cat sat on the mat all afternoon.', 'Quarterly revenue grew by five percent.', 'Our office is closed on public holidays.'];
const GUIDE = `# Gardening guide

## Tomatoes

Tomatoes need at least six hours of direct sunlight a day and deep, infrequent watering.

## Roses

Prune roses in late winter, just before new growth begins, cutting above an outward-facing bud.
`;

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot; // both unit length
}

describe('re-embedding vectors made by other weights', function () {
  this.timeout(180_000);
  let oldEmbedder: WorkerEmbedder;

  before(async () => {
    oldEmbedder = createEmbedder({ dtype: OLD_DTYPE, threads: 1 });
  });
  after(async () => {
    await oldEmbedder.close();
  });

  /**
   * A workspace as an installation that ran the q4 weights left it: memories written by the platform's own
   * code with a q4 embedder, and a document whose chunks carry q4 vectors. Answers what it made.
   */
  async function workspaceWithOldVectors(name: string) {
    const tenant = await newTenant(name);
    const db = testPlatform().db;
    const memoryIds: string[] = [];
    for (const content of MEMORIES) memoryIds.push((await writeMemory(db, oldEmbedder, tenant.tenantId, content)).id);
    expect((await call('POST', '/v1/knowledge', { key: tenant.key, body: { name: 'garden' } })).status).to.equal(201);
    const upload = await call('POST', '/v1/knowledge/garden/documents', { key: tenant.key, body: { title: 'guide', text: GUIDE } });
    expect((await settledDocument(tenant.key, 'garden', upload.body.document.id)).status).to.equal('ready');
    const chunks = await db.selectFrom('chunks').select(['id', 'content', 'heading_path']).where('document_id', '=', upload.body.document.id).execute();
    expect(chunks.length).to.be.greaterThan(1);
    const vectors = await oldEmbedder.embed(chunks.map((c) => embeddingText(c.heading_path, c.content)));
    for (const [i, chunk] of chunks.entries()) {
      await db.updateTable('chunks').set({ embedding: toSql(Array.from(vectors[i]!))!, embedding_dtype: OLD_DTYPE }).where('id', '=', chunk.id).execute();
    }
    return { ...tenant, memoryIds, chunkIds: chunks.map((c) => c.id) };
  }

  async function searches(key: string) {
    const memory = await call('POST', '/v1/memory/search', { key, body: { query: 'A feline rested on the rug', k: 5 } });
    const knowledge = await call('POST', '/v1/knowledge/search', { key, body: { query: 'when should I cut back my rose bushes?', k: 5 } });
    expect(memory.status).to.equal(200);
    expect(knowledge.status).to.equal(200);
    return { memories: memory.body.hits as Array<{ id: string; similarity: number }>, chunks: knowledge.body.hits as Array<{ chunk_id: string; content: string }> };
  }

  /** Each row's weights, and its vector against a fresh embedding of its text with the current weights. */
  async function expectCurrent(memoryIds: string[], chunkIds: string[]) {
    const db = testPlatform().db;
    const memories = memoryIds.length
      ? await db.selectFrom('memories').select(['content', 'embedding_model', 'embedding_dtype', sql<string>`embedding::text`.as('vector')]).where('id', 'in', memoryIds).execute()
      : [];
    const chunks = chunkIds.length
      ? await db
          .selectFrom('chunks')
          .select(['content', 'heading_path', 'embedding_model', 'embedding_dtype', sql<string>`embedding::text`.as('vector')])
          .where('id', 'in', chunkIds)
          .execute()
      : [];
    const rows = [...memories.map((m) => ({ ...m, text: m.content })), ...chunks.map((c) => ({ ...c, text: embeddingText(c.heading_path, c.content) }))];
    expect(rows).to.have.length(memoryIds.length + chunkIds.length);
    const fresh = await sharedEmbedder().embed(rows.map((r) => r.text));
    for (const [i, row] of rows.entries()) {
      expect({ embedding_model: row.embedding_model, embedding_dtype: row.embedding_dtype }).to.deep.equal(CURRENT);
      expect(cosine(JSON.parse(row.vector) as number[], fresh[i]!), row.text).to.be.above(0.9999);
    }
  }

  it('searches skip vectors of other weights; the workflow re-embeds them in batches over both tables, after which they are found', async () => {
    const old = await workspaceWithOldVectors('reembed');
    const db = testPlatform().db;
    const updatedBefore = await db.selectFrom('memories').select(['id', 'updated_at']).where('id', 'in', old.memoryIds).orderBy('id').execute();

    // Compared with a query of the current weights' space, a q4 vector's distance means nothing: such rows are not hits.
    expect(await hasVectorsEmbeddedOtherwise(db, sharedEmbedder()), 'the start-up check sees them').to.equal(true);
    const before = await searches(old.key);
    expect(before.memories, 'memories of other weights are not compared').to.deep.equal([]);
    expect(before.chunks, 'chunks of other weights are not compared').to.deep.equal([]);

    // Small batches and runs: the walk crosses a batch boundary, the table boundary and a continue-as-new.
    const workflowId = `reembed-test-${Date.now()}`;
    const reembedded = await testPlatform().temporal.workflow.execute<typeof reembedVectors>(REEMBED_VECTORS_WORKFLOW_TYPE, {
      taskQueue: REEMBED_VECTORS_TASK_QUEUE,
      workflowId,
      args: [{ ...reembedVectorsInput(CURRENT), batchSize: 2, batchesPerRun: 2 }],
    });
    expect(reembedded).to.be.at.least(old.memoryIds.length + old.chunkIds.length);
    const history = await testPlatform().temporal.workflow.getHandle(workflowId).fetchHistory();
    expect(history.events![0]!.workflowExecutionStartedEventAttributes!.continuedExecutionRunId, 'the last run continued an earlier one').to.be.a('string').and.not.empty;
    const queues = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name).filter((name) => name !== undefined);
    expect(new Set(queues), 'the batches went to the current weights\' own queue').to.deep.equal(new Set([reembedBatchTaskQueue(CURRENT)]));

    await expectCurrent(old.memoryIds, old.chunkIds);
    expect(await hasVectorsEmbeddedOtherwise(db, sharedEmbedder()), 'and then finds none').to.equal(false);
    const updatedAfter = await db.selectFrom('memories').select(['id', 'updated_at']).where('id', 'in', old.memoryIds).orderBy('id').execute();
    expect(updatedAfter, 're-embedding does not change what a memory says').to.deep.equal(updatedBefore);

    const after = await searches(old.key);
    expect(after.memories.map((h) => h.id)).to.have.members(old.memoryIds);
    expect(after.memories[0]!.id, 'the paraphrase ranks first again').to.equal(old.memoryIds[0]);
    expect(after.chunks[0]!.content).to.include('Prune roses');
    expect(after.chunks.map((h) => h.chunk_id)).to.have.members(old.chunkIds);
  });

  it('a worker that starts with such vectors in the database starts the workflow itself', async () => {
    const old = await workspaceWithOldVectors('reembed-start');
    await testWorkerPool().stop();
    await testWorkerPool().start();
    const handle = testPlatform().temporal.workflow.getHandle<typeof reembedVectors>(reembedVectorsWorkflowId(CURRENT));
    const reembedded = await handle.result();
    expect(reembedded).to.be.at.least(old.memoryIds.length + old.chunkIds.length);
    await expectCurrent(old.memoryIds, old.chunkIds);
    const found = await searches(old.key);
    expect(found.memories.map((h) => h.id)).to.have.members(old.memoryIds);
  });

  it('a memory rewritten after it was read for re-embedding keeps its newer vector', async () => {
    const tenant = await newTenant('reembed-race');
    const db = testPlatform().db;
    const memory = await writeMemory(db, oldEmbedder, tenant.tenantId, 'The meeting is on Monday.');
    const [read] = (await findMemoriesEmbeddedOtherwise(db, CURRENT, '', 1000)).filter((m) => m.id === memory.id);
    expect(read).to.include({ content: 'The meeting is on Monday.', embedding_dtype: OLD_DTYPE });

    const patched = await call('PATCH', `/v1/memory/${memory.id}`, { key: tenant.key, body: { content: 'The dentist appointment moved to Thursday.' } });
    expect(patched.status).to.equal(200);
    const [staleVector] = await sharedEmbedder().embed([read!.content]);
    const stored = await replaceMemoryEmbedding(db, read!, { embedding: toSql(Array.from(staleVector!))!, ...CURRENT });
    expect(stored, 'the write read before the rewrite is dropped').to.equal(false);
    await expectCurrent([memory.id], []);
    const hits = (await call('POST', '/v1/memory/search', { key: tenant.key, body: { query: 'when do I see the dentist?', k: 1 } })).body.hits;
    expect(hits[0].id).to.equal(memory.id);
  });

  it('a chunk re-embedded since it was read is not written again; a worker with other weights takes no batch', async () => {
    const old = await workspaceWithOldVectors('reembed-chunk');
    const db = testPlatform().db;
    const [read] = (await findChunksEmbeddedOtherwise(db, CURRENT, '', 1000)).filter((c) => c.id === old.chunkIds[0]);
    expect(read).to.include({ embedding_dtype: OLD_DTYPE });
    const refused = await reembedBatch(db, oldEmbedder, CURRENT, REEMBED_START, 10).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(refused?.message, 'a q4 worker refuses the walk of the current weights').to.match(new RegExp(`embeds with .* q4, not .* ${EMBEDDING_DTYPE}`));

    // The input of a workflow started before batches had a queue per weights (no version): still served.
    await testPlatform().temporal.workflow.execute<typeof reembedVectors>(REEMBED_VECTORS_WORKFLOW_TYPE, {
      taskQueue: REEMBED_VECTORS_TASK_QUEUE,
      workflowId: `reembed-chunk-test-${Date.now()}`,
      args: [{ weights: CURRENT }],
    });
    const [wrong] = await oldEmbedder.embed(['something else entirely']);
    expect(await replaceChunkEmbedding(db, read!, { embedding: toSql(Array.from(wrong!))!, ...CURRENT }), 'the stale read is dropped').to.equal(false);
    await expectCurrent([], old.chunkIds);
  });

  it('with no worker of the target weights left (a rollback mid-way), a batch waits on its queue and the workflow ends after the wait, failing no attempt', async () => {
    const goneWeights = { embedding_model: EMBEDDING_MODEL_ID, embedding_dtype: 'fp16' };
    const workflowId = `reembed-orphan-test-${Date.now()}`;
    const reembedded = await testPlatform().temporal.workflow.execute<typeof reembedVectors>(REEMBED_VECTORS_WORKFLOW_TYPE, {
      taskQueue: REEMBED_VECTORS_TASK_QUEUE,
      workflowId,
      args: [{ ...reembedVectorsInput(goneWeights), waitForWorkerMs: 1500 }],
    });
    expect(reembedded).to.equal(0);
    const events = (await testPlatform().temporal.workflow.getHandle(workflowId).fetchHistory()).events!;
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes);
    expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name)).to.deep.equal([reembedBatchTaskQueue(goneWeights)]);
    expect(events.filter((e) => e.activityTaskStartedEventAttributes), 'no worker of other weights took it').to.have.length(0);
    const timedOut = events.filter((e) => e.activityTaskTimedOutEventAttributes).map((e) => decodeTimeoutType(e.activityTaskTimedOutEventAttributes!.failure?.timeoutFailureInfo?.timeoutType));
    expect(timedOut, 'it waited for a worker, and only that long').to.deep.equal(['SCHEDULE_TO_START']);
    expect(events.at(-1)!.workflowExecutionCompletedEventAttributes, 'it ends, not fails').to.not.equal(undefined);
  });
});
