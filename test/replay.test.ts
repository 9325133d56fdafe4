import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';
import { TASK_QUEUES } from '../workflows/task-queues.js';

/** Real histories, committed so that a non-deterministic change to their workflows fails this suite. */
const FIXTURES_DIR = path.resolve('test/fixtures');
/** Where RECORD_HISTORY_FIXTURE writes the newest recording; older fixtures stay, so old histories keep replaying. */
const FIXTURE = path.join(FIXTURES_DIR, 'agent-run-history.json');
/** Recorded before `startRun` became `beginRun` (the `begin-run` patch): what in-flight and stored runs of that time look like. */
const PRE_PATCH_FIXTURE = path.join(FIXTURES_DIR, 'agent-run-history-before-begin-run.json');
/**
 * Every committed history, of every workflow that has some: agentRun's above, the experiment workflow's
 * from before the 'experiment-cells-inline' patch (cells as experimentCell children) and after, and the
 * runHistoryArchiver's (recorded open, after two of its activities, by fetchHistory() of the running
 * archiver: it never ends by itself).
 */
const HISTORY_FIXTURES = fs.readdirSync(FIXTURES_DIR).filter((name) => /-history.*\.json$/.test(name)).sort();
const DRIFTED_WORKFLOWS = fileURLToPath(new URL('./fixtures/drifted-workflows/index.js', import.meta.url));
/** What the API process (api/server.ts) is made of, short of starting it. */
const API_MODULES = ['../api/app.js', '../api/deps.js'].map((module) => fileURLToPath(new URL(module, import.meta.url)));
const run = promisify(execFile);

describe('replay', () => {
  let key: string;
  let agentId: string;
  before(async () => {
    ({ key } = await newTenant('replay'));
    const calculator = await createBuiltinTool(key, 'calculator');
    const planWrite = await createBuiltinTool(key, 'plan_write');
    agentId = await publishAgent(key, 'replayable', scriptedGraph([
      { tool_calls: [{ tool: 'plan_write', arguments: { steps: ['add'] } }, { tool: 'calculator', arguments: { expression: '40+2' } }] },
      { text: 'forty-two' },
    ], [calculator, planWrite]));
  });

  async function finishedRun(): Promise<string> {
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'add' } });
    expect(response.frames.at(-1)!.event).to.equal('run.completed');
    return response.frames[0]!.data.run_id;
  }

  /** The history is stored just after the run closes; until then replay answers 409. */
  async function replay(runId: string) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await call('POST', `/v1/runs/${runId}/replay`, { key });
      if (response.status !== 409) return response;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the history of ${runId} was never stored`);
  }

  /** The task queues of the replay workflows the API started for a run (visibility lags a little). */
  async function replayQueuesOf(runId: string): Promise<string[]> {
    const { temporal } = testPlatform();
    const queues: string[] = [];
    for (let attempt = 0; attempt < 50 && queues.length === 0; attempt++) {
      for await (const workflow of temporal.workflow.list({ query: `WorkflowType = "replayRun" AND ExecutionStatus = "Completed"` })) {
        if (workflow.workflowId.startsWith(`replay-${runId}-`)) queues.push(workflow.taskQueue);
      }
      if (queues.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return queues;
  }

  it('stores a finished run’s history in Postgres and replays it deterministically on the replays queue', async () => {
    const runId = await finishedRun();
    const response = await replay(runId);
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ run_id: runId, deterministic: true, error: null });
    expect(response.body.event_count).to.be.greaterThan(20);
    expect(await replayQueuesOf(runId)).to.deep.equal([TASK_QUEUES.replays]);

    // Started at the current version, the run took every change without asking: no patch marker, and no
    // search-attribute upsert with one (AgentRunInput.version).
    const stored = await testPlatform().db.selectFrom('run_histories').select('history').where('run_id', '=', runId).executeTakeFirstOrThrow();
    const events = (stored.history as { events: Array<{ eventType: string; markerRecordedEventAttributes?: { markerName: string } }> }).events;
    expect(events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_patch')).to.deep.equal([]);
    expect(events.filter((event) => event.eventType === 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')).to.deep.equal([]);

    if (process.env.RECORD_HISTORY_FIXTURE) {
      // RECORD_HISTORY_FIXTURE=1 npm test -- --grep replay: after an intended change of agentRun.
      fs.writeFileSync(FIXTURE, JSON.stringify(stored.history, null, 1) + '\n');
    }
  });

  it('answers deterministic: false with the replay error when the current code takes another path', async () => {
    const runId = await finishedRun();
    expect((await replay(runId)).body.deterministic).to.equal(true);
    // The stored history now says the run's first activity had another name than the code schedules.
    const { db } = testPlatform();
    const stored = await db.selectFrom('run_histories').select('history').where('run_id', '=', runId).executeTakeFirstOrThrow();
    const history = stored.history as { events: Array<{ activityTaskScheduledEventAttributes?: { activityType: { name: string } } }> };
    history.events.find((event) => event.activityTaskScheduledEventAttributes)!.activityTaskScheduledEventAttributes!.activityType.name = 'renamedActivity';
    await db.updateTable('run_histories').set({ history: JSON.stringify(history) }).where('run_id', '=', runId).execute();

    const response = await call('POST', `/v1/runs/${runId}/replay`, { key });
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ run_id: runId, deterministic: false, event_count: history.events.length });
    expect(response.body.error).to.match(/^DeterminismViolationError: .*renamedActivity/);
  });

  it('answers 409 while a run has no stored history yet', async () => {
    const askHuman = await createBuiltinTool(key, 'ask_human');
    const askerId = await publishAgent(key, 'asker', scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which?' } }] }, { text: 'ok' }], [askHuman]));
    const paused = await stream('POST', `/v1/agents/${askerId}/runs`, { key, body: { input: 'ask' } });
    expect(paused.frames.at(-1)!.event).to.equal('run.paused');
    const runId: string = paused.frames[0]!.data.run_id;

    const response = await call('POST', `/v1/runs/${runId}/replay`, { key });
    expect(response.status).to.equal(409);
    expect(response.body.error).to.deep.equal({ code: 'conflict', message: `run ${runId} has no stored history yet (it is stored once the run has ended)` });
    expect((await call('POST', `/v1/runs/${runId}/cancel`, { key })).status).to.equal(202);
  });

  it('never loads the worker SDK or workers/ into the API: replays run on a worker', async () => {
    // Every module the API loads, however indirectly.
    const script = [
      "import { registerHooks } from 'node:module';",
      'const loaded = [];',
      'registerHooks({ resolve: (specifier, context, next) => { const resolved = next(specifier, context); loaded.push(resolved.url); return resolved; } });',
      'for (const module of process.argv.slice(1)) await import(module);',
      // Exits once the list is written: something the API loads may keep the process alive.
      'process.stdout.write(JSON.stringify(loaded), () => process.exit(0));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, ...API_MODULES]);
    const loaded: string[] = JSON.parse(stdout);
    expect(loaded.some((url) => url.endsWith('/dist/api/routes/runs.js'))).to.equal(true);
    expect(loaded.filter((url) => url.includes('@temporalio/worker') || url.includes('/dist/workers/'))).to.deep.equal([]);
  });

  for (const fixture of HISTORY_FIXTURES) {
    it(`replays the committed history fixture ${fixture} against the current workflow code`, async () => {
      const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, fixture), 'utf8')));
      await Worker.runReplayHistory({ workflowBundle: await testPlatform().workflowBundle() }, history);
    });
  }

  it('catches a non-deterministic change: a fixture fails against an altered workflow where it alters it', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(PRE_PATCH_FIXTURE, 'utf8')));
    const drifted = await bundleWorkflowCode({ workflowsPath: DRIFTED_WORKFLOWS, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    const error = await Worker.runReplayHistory({ workflowBundle: drifted }, history).then(() => undefined, (err: Error) => err);
    expect(error?.name).to.equal('DeterminismViolationError');
    // The drifted code matches the history up to its first model turn, and differs exactly there.
    expect(error?.message).to.match(/'callModel'.*'finishRun'/);
  });
});
