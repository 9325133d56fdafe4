import { Client, WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { expect } from 'chai';
import { sql } from 'kysely';
import { startAgentRunWorkflow, startRunOrEndIt } from '../activities/runs/start-run-workflow.js';
import { WorkNotStartedError } from '../activities/start-recorded-work.js';
import { AGENT_RUN_WORKFLOW_TYPE } from '../workflows/agent-run-api.js';
import { startExperimentWorkflow } from '../activities/evals/start-experiment-workflow.js';
import { startDocumentConversion } from '../activities/knowledge/start-conversion.js';
import { findPublishedVersion } from '../db/agents.js';
import { insertDocument } from '../db/documents.js';
import { insertExperiment } from '../db/experiments.js';
import { findKnowledgeBaseByName } from '../db/knowledge-bases.js';
import type { NewRun } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { GIVE_UP_AFTER_MS, sweepStrandedWork, STRANDED_AFTER_MS, type SweepCursors, type SweepOutcome } from '../workers/stranded-work/sweep.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { settledRun } from './support/channels.js';
import { settledDocument } from './support/documents.js';
import { addCases, createSuite, finishedExperiment } from './support/evals.js';
import { testPlatform } from './support/global.js';
import { startApiProcess, type ApiProcess } from './support/platform-processes.js';
import { recordQueuedRun } from './support/recorded-run.js';
import { stream } from './support/sse.js';

/** One whole sweep: page after page of each kind until every cursor is back at the start. */
async function sweep(): Promise<Record<string, SweepOutcome>> {
  const cursors: SweepCursors = new Map();
  const all: Record<string, SweepOutcome> = {};
  do {
    for (const [kind, outcome] of Object.entries(await sweepStrandedWork(testPlatform().db, testPlatform().temporal, cursors))) {
      all[kind] ??= { started: [], ended: [] };
      all[kind].started.push(...outcome.started);
      all[kind].ended.push(...outcome.ended);
    }
  } while ([...cursors.values()].some((cursor) => cursor !== ''));
  return all;
}

/**
 * Work recorded in Postgres whose workflow was never started (workers/stranded-work/): the records are
 * made here the way the API makes them, minus the start — what an API process killed between its commit
 * and its start leaves — and dated back past STRANDED_AFTER_MS; then the sweep runs, as every worker
 * process runs it once a minute.
 */
describe('stranded work: records whose workflow was never started', function () {
  this.timeout(60_000);
  let tenant: TestTenant;
  let agentId: string;

  before(async () => {
    tenant = await newTenant('stranded');
    agentId = await publishAgent(tenant.key, 'stranded', scriptedGraph([{ text: 'picked up at last' }]));
    await call('POST', '/v1/knowledge', { key: tenant.key, body: { name: 'stranded' } });
  });

  /** A run recorded as POST /v1/agents/{id}/runs records it, without its workflow. */
  async function recordedRun(extra: Partial<NewRun> = {}): Promise<string> {
    return recordQueuedRun(testPlatform().db, { tenantId: tenant.tenantId, agentId, input: 'hello', source: 'api', ...extra });
  }

  /** A document recorded as a large text upload is recorded for the background conversion, without its workflow. */
  async function recordedDocument(text: string): Promise<string> {
    const document = await withTenant(testPlatform().db, tenant.tenantId, async (tx) => {
      const kb = (await findKnowledgeBaseByName(tx, tenant.tenantId, 'stranded'))!;
      const bytes = Buffer.from(text);
      return insertDocument(tx, tenant.tenantId, kb.id, { title: 'ledger', filename: 'ledger.txt', content_type: 'text/plain', format: 'txt', size_bytes: bytes.length, status: 'accepted', error: null, source: bytes, markdown: null });
    });
    return document.id;
  }

  /** Dates the record back by `ms` (by default past the sweep's threshold), as if it had waited that long. */
  async function age(table: 'runs' | 'documents' | 'experiments', id: string, ms = 2 * STRANDED_AFTER_MS): Promise<void> {
    // created_at is written by its default only (db/schema.ts), so the update is plain SQL.
    await sql`update ${sql.table(table)} set created_at = ${new Date(Date.now() - ms)} where id = ${id}`.execute(testPlatform().db);
  }

  const rejected = (start: Promise<unknown>) => start.then(() => 'started', (err: unknown) => err);

  it('starts a run an API recorded but never started, once, and it runs to its end', async () => {
    const runId = await recordedRun();
    await age('runs', runId);
    expect((await sweep()).runs!.started).to.include(runId);
    // Asked again (another worker's sweep): its workflow exists, so it is not started twice.
    expect((await sweep()).runs!.started).not.to.include(runId);

    const run = await settledRun(tenant.key, runId);
    expect(run).to.include({ status: 'completed', output: 'picked up at last' });
    const events = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    const lifecycle = events.frames.map((frame) => frame.event).filter((event) => event !== 'message.delta');
    expect(lifecycle).to.deep.equal(['run.created', 'run.started', 'message.completed', 'run.completed']);
    // Its workflow has closed; a start is still refused, so no sweep could run it again.
    expect(await rejected(startAgentRunWorkflow(testPlatform().temporal, { tenantId: tenant.tenantId, runId, agentId, source: 'api' }))).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('ends a run whose start Temporal refused as failed, and a workflow that starts it after all changes nothing', async () => {
    const runId = await recordedRun();
    const run = { tenantId: tenant.tenantId, runId, agentId, source: 'api' };
    // A client of a namespace that does not exist: Temporal refuses its every start.
    const refusing = new Client({ connection: testPlatform().temporal.connection, namespace: 'no-such-namespace' });
    expect(await rejected(startRunOrEndIt({ db: testPlatform().db, temporal: refusing }, run))).to.be.instanceOf(WorkNotStartedError);
    const ended = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(ended).to.include({ status: 'failed' });
    expect(ended.error.code).to.equal('unavailable');

    // The start had gone through after all (a timeout on its way back): the workflow begins nothing.
    await startAgentRunWorkflow(testPlatform().temporal, run);
    const result = await testPlatform().temporal.workflow.getHandle(runId).result().then(() => 'completed', (err: unknown) => err);
    expect(result).to.be.instanceOf(WorkflowFailedError);
    const after = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(after.error).to.deep.equal(ended.error);
    const events = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    expect(events.frames.map((frame) => frame.event)).to.deep.equal(['run.created', 'run.failed']);
  });

  it('cancels a run that was never started at once, so that no sweep starts it later', async () => {
    const runId = await recordedRun();
    const cancel = await call('POST', `/v1/runs/${runId}/cancel`, { key: tenant.key });
    expect(cancel.status, JSON.stringify(cancel.body)).to.equal(202);
    const run = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(run.status).to.equal('cancelled');
    expect(run.usage).to.include({ total_tokens: 0, cost_usd: '0' });
    const events = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    expect(events.frames.map((frame) => frame.event)).to.deep.equal(['run.created', 'run.cancelled']);
    await age('runs', runId);
    expect((await sweep()).runs!.started).not.to.include(runId);
  });

  it('leaves younger runs, and the runs that subagents, schedules and evals start themselves, alone', async () => {
    const version = (await withTenant(testPlatform().db, tenant.tenantId, (tx) => findPublishedVersion(tx, tenant.tenantId, agentId)))!;
    const fresh = await recordedRun();
    // The parent stays unstarted: a parent that ran would end its unstarted children itself.
    const parent = await recordedRun();
    const child = await recordedRun({ parent: { runId: parent, step: 1, depth: 1 } });
    const scheduled = await recordedRun({ source: 'schedule', schedule: { scheduleId: 'sch_stranded', firingId: 'firing-1' } });
    const evaluated = await recordedRun({ source: 'eval', evalCell: { experimentId: 'exp_stranded', cellId: 'cell_stranded', agentVersionId: version.id, graph: version.graph } });
    const owned = [child, scheduled, evaluated];
    for (const runId of owned) await age('runs', runId);
    try {
      const started = (await sweep()).runs!.started;
      for (const runId of [fresh, ...owned]) expect(started).not.to.include(runId);
      for (const runId of owned) expect((await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run.status).to.equal('queued');
    } finally {
      // Not left for a later sweep: nothing will ever start these.
      await testPlatform().db.deleteFrom('runs').where('id', 'in', [fresh, parent, ...owned]).execute();
    }
  });

  it('ends instead of starting a run that has waited over an hour for its workflow', async () => {
    const runId = await recordedRun();
    await age('runs', runId, GIVE_UP_AFTER_MS + 60_000);
    const outcome = (await sweep()).runs!;
    expect(outcome.started).not.to.include(runId);
    expect(outcome.ended).to.include(runId);
    const run = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(run.status).to.equal('failed');
    expect(run.error).to.include({ code: 'unavailable' });
    expect(run.error.message).to.match(/never started/);
  });

  it('leaves a run whose workflow is open, however old, and ends one whose workflow closed without beginning it', async () => {
    const runId = await recordedRun();
    // A workflow of the run's id that no worker will ever take: open, but it never begins the run.
    await testPlatform().temporal.workflow.start(AGENT_RUN_WORKFLOW_TYPE, { workflowId: runId, taskQueue: 'no-worker-polls-this', args: [] });
    await age('runs', runId, GIVE_UP_AFTER_MS + 60_000);
    let outcome = (await sweep()).runs!;
    expect(outcome.ended).not.to.include(runId);
    expect((await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run.status).to.equal('queued');

    await testPlatform().temporal.workflow.getHandle(runId).terminate('closed before it began the run');
    // Young again: its start is refused (the closed workflow holds the id), so nothing runs it twice.
    await age('runs', runId);
    outcome = (await sweep()).runs!;
    expect(outcome.started).not.to.include(runId);
    expect(outcome.ended).not.to.include(runId);
    // Overdue: ended, with the reason.
    await age('runs', runId, GIVE_UP_AFTER_MS + 60_000);
    expect((await sweep()).runs!.ended).to.include(runId);
    const run = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(run.status).to.equal('failed');
    expect(run.error.message).to.match(/ended without running it/);
  });

  it("starts a document's processing when its upload was accepted but nothing started it", async () => {
    const documentId = await recordedDocument('The lighthouse keeper logs every passing ship in a green ledger.');
    await age('documents', documentId);
    expect((await sweep()).documents!.started).to.include(documentId);
    expect((await sweep()).documents!.started).not.to.include(documentId);
    const settled = await settledDocument(tenant.key, 'stranded', documentId);
    expect(settled).to.include({ status: 'ready', chunk_count: 1 });
    const hits = await call('POST', '/v1/knowledge/search', { key: tenant.key, body: { query: 'who records the ships?', kb: 'stranded' } });
    expect(hits.body.hits[0]).to.include({ document_id: documentId });
    expect(await rejected(startDocumentConversion(testPlatform().temporal, { tenantId: tenant.tenantId, documentId }))).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('fails a document that has waited over an hour for its processing', async () => {
    const documentId = await recordedDocument('A note that nothing processed in time.');
    await age('documents', documentId, GIVE_UP_AFTER_MS + 60_000);
    expect((await sweep()).documents!.ended).to.include(documentId);
    const document = (await call('GET', `/v1/knowledge/stranded/documents/${documentId}`, { key: tenant.key })).body.document;
    expect(document.status).to.equal('failed');
    expect(document.error).to.match(/never started.*upload it again/);
  });

  /** An experiment of no cells recorded as POST /v1/evals/experiments records one, without its workflow. */
  async function recordedExperiment(name: string) {
    const suite = await createSuite(tenant.key, 'stranded', 'stranded-suite');
    return withTenant(testPlatform().db, tenant.tenantId, (tx) =>
      insertExperiment(tx, tenant.tenantId, {
        agentId,
        suiteId: suite.id,
        suiteName: suite.name,
        name,
        description: null,
        variants: [],
        repeats: 1,
        concurrency: 1,
        primaryScorer: null,
        baselineExperimentId: null,
        caseCount: 0,
        cellCount: 0,
      }),
    );
  }

  it('starts an experiment recorded but never started, and ends one that waited over an hour', async () => {
    const experiment = await recordedExperiment('stranded');
    await age('experiments', experiment.id);
    expect((await sweep()).experiments!.started).to.include(experiment.id);
    expect((await sweep()).experiments!.started).not.to.include(experiment.id);
    expect((await finishedExperiment(tenant.key, experiment.id)).experiment.status).to.equal('completed');
    expect(await rejected(startExperimentWorkflow(testPlatform().temporal, experiment))).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);

    const late = await recordedExperiment('too late');
    await age('experiments', late.id, GIVE_UP_AFTER_MS + 60_000);
    expect((await sweep()).experiments!.ended).to.include(late.id);
    const ended = (await call('GET', `/v1/evals/experiments/${late.id}`, { key: tenant.key })).body.experiment;
    expect(ended.status).to.equal('failed');
    expect(ended.error.code).to.equal('unavailable');
  });
});

/**
 * Temporal refusing starts, for real: a second API process (`node dist/api/server.js`) on the same
 * Postgres and Temporal, but a Temporal namespace that does not exist, so every workflow start it makes
 * is refused. Needs DATABASE_URL (a second process cannot open the embedded PGlite); skipped otherwise.
 */
describe('stranded work: an API whose workflow starts Temporal refuses', function () {
  this.timeout(120_000);
  let api: ApiProcess | undefined;
  let tenant: TestTenant;

  before(async function () {
    if (!process.env.DATABASE_URL) {
      console.log('      (skipped: needs DATABASE_URL, i.e. the suite on Postgres, as CI runs it; a second process cannot share embedded PGlite)');
      return this.skip();
    }
    api = await startApiProcess('api-no-namespace', {
      databaseUrl: process.env.DATABASE_URL,
      temporalAddress: testPlatform().temporalAddress,
      temporalNamespace: 'no-such-namespace',
      extra: { TEMPORAL_LOG_LEVEL: 'ERROR' },
    });
    tenant = await newTenant('refused');
    await publishAgent(tenant.key, 'refused', scriptedGraph([{ text: 'never said' }]));
    await call('POST', '/v1/knowledge', { key: tenant.key, body: { name: 'refused' } });
  });

  after(async () => {
    await api?.stop();
  });

  it('answers POST /v1/agents/{id}/runs with 503 and records the run as failed, not queued for good', async () => {
    const response = await fetch(`${api!.url}/v1/agents/refused/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hello' }),
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status, JSON.stringify(body)).to.equal(503);
    expect(body.error.code).to.equal('unavailable');
    const runId = /run_[0-9A-Za-z]+/.exec(body.error.message)?.[0];
    expect(runId, body.error.message).to.be.a('string');

    const run = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
    expect(run.status).to.equal('failed');
    expect(run.error.code).to.equal('unavailable');
    const events = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    expect(events.frames.map((frame) => frame.event)).to.deep.equal(['run.created', 'run.failed']);
  });

  it('answers POST /v1/evals/experiments with 503 and records the experiment as failed, its cells skipped', async () => {
    const suite = await createSuite(tenant.key, 'refused', 'refused-suite', [{ type: 'contains' }]);
    await addCases(tenant.key, suite.id, [{ input: 'a', expected: 'a' }]);
    const response = await fetch(`${api!.url}/v1/evals/experiments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ suite: suite.id, variants: [{ name: 'v' }] }),
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status, JSON.stringify(body)).to.equal(503);
    expect(body.error.code).to.equal('unavailable');
    const listed = (await call('GET', '/v1/evals/experiments', { key: tenant.key })).body.experiments;
    const experiment = listed.find((e: { suite_id: string }) => e.suite_id === suite.id);
    expect(experiment).to.include({ status: 'failed' });
    expect(experiment.error.code).to.equal('unavailable');
    expect(experiment.cells).to.include({ skipped: 1, pending: 0 });
  });

  it('accepts a document upload all the same, and the sweep starts its processing once it can', async () => {
    // Over 256 KB, so it goes to the background conversion rather than being embedded during the upload.
    const text = 'The orchard keeps bees for pollination from March until May.\n\n'.repeat(4300);
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'orchard.txt');
    const response = await fetch(`${api!.url}/v1/knowledge/refused/documents`, { method: 'POST', headers: { authorization: `Bearer ${tenant.key}` }, body: form });
    const body = (await response.json()) as { document: { id: string; status: string } };
    expect(response.status, JSON.stringify(body)).to.equal(202);
    expect(body.document.status).to.equal('accepted');

    await sql`update documents set created_at = ${new Date(Date.now() - 2 * STRANDED_AFTER_MS)} where id = ${body.document.id}`.execute(testPlatform().db);
    expect((await sweep()).documents!.started).to.include(body.document.id);
    expect((await settledDocument(tenant.key, 'refused', body.document.id)).status).to.equal('ready');
  });
});
