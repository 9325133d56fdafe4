import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { CrashPoint } from '../activities/crash-points.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { ALLOWED_TOOL_HOST, testPlatform, testWorkerPool } from './support/global.js';
import { sendJson, startToolServer, type LocalToolServer } from './support/tool-http-server.js';
import { stream, type SseFrame } from './support/sse.js';

/**
 * The worker SIGKILLed at each point of a run's bookkeeping (activities/crash-points.ts), 20 runs at each:
 * every run still ends once, with each event, step and token counted once. One worker holds all the runs
 * at once — each point's runs in a workspace of their own, armed for that point — and is killed once;
 * the next worker carries every run on. Runs paused on `ask_human` are killed under too and answered after,
 * and runs held after an HTTP tool's step was committed must not call the tool again.
 * Needs the worker in a process of its own, so Postgres (DATABASE_URL), as CI runs it.
 */
const RUNS_PER_POINT = 20;
const HELD_POINTS: CrashPoint[] = [
  'model-turn.unrecorded',
  'complete-step.before-commit',
  'complete-step.after-commit',
  'finish-run.before-commit',
  'finish-run.after-commit',
];
/** Held at `complete-step.after-commit` too, but in an HTTP tool's step: the call must not be made again. */
const HTTP_STEP = 'http-step.after-commit';
type HeldPoint = CrashPoint | typeof HTTP_STEP;
const HELD: HeldPoint[] = [...HELD_POINTS, HTTP_STEP];
type Point = HeldPoint | 'paused';
const POINTS: Point[] = [...HELD, 'paused'];
/** The crash point a held case arms, whose marker files it leaves. */
const armedAt = (point: HeldPoint): CrashPoint => (point === HTTP_STEP ? 'complete-step.after-commit' : point);

/** Two steps in one turn: a workflow built-in (its end is the `completeStep` activity) and an activity tool. */
const WORK_SCRIPT = [
  {
    tool_calls: [
      { tool: 'plan_write', arguments: { steps: [{ title: 'multiply' }] } },
      { tool: 'calculator', arguments: { expression: '6 * 7' } },
    ],
  },
  { text: 'It is 42.' },
];
const ASK_SCRIPT = [
  { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which number?' } }, { tool: 'calculator', arguments: { expression: '6 * 7' } }] },
  { text: 'It is 42.' },
];
/** The HTTP tool's step ends first (held there), then plan_write's, the point's next arrival. */
const HTTP_SCRIPT = [
  { tool_calls: [{ tool: 'fetch_number', arguments: {} }, { tool: 'plan_write', arguments: { steps: [{ title: 'multiply' }] } }] },
  { text: 'It is 42.' },
];
const ANSWER = 'forty-two';

interface RunRecord {
  runId: string;
  run: any;
  steps: any[];
  frames: SseFrame[];
  stored: { seq: number; type: string }[];
}

interface PointCase {
  tenant: TestTenant;
  agentId: string;
  control: RunRecord;
  runs: RunRecord[];
}

// Once with model turns and tool calls as activities, once as local activities (RUN_CALLS), where the
// whole run is one workflow task and everything the killed worker did runs again on the next one.
for (const runCalls of ['activities', 'local'] as const) describe(`runs: worker crashes at each bookkeeping point (RUN_CALLS=${runCalls})`, function () {
  this.timeout(240_000);
  const cases = new Map<Point, PointCase>();
  const crashDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-points-'));
  let killedPid = '';
  let toolServer: LocalToolServer;

  before(async function () {
    if (!testWorkerPool().separateProcess) {
      console.log('      (skipped on embedded PGlite: killing a worker needs it in its own process, which needs DATABASE_URL)');
      this.skip();
    }
    const workers = testWorkerPool();
    // Runs held inside a transaction each keep a connection until the kill: give this worker room.
    await workers.stop();
    // 100 activities are held for good, the SDK's default number of slots: the paused runs need more.
    await workers.start({ AGENT_PLATFORM_CRASH_DIR: crashDir, DATABASE_POOL_SIZE: '60', WORKER_MAX_CONCURRENT_ACTIVITIES: '200', RUN_CALLS: runCalls });

    fs.mkdirSync(path.join(crashDir, 'armed'));
    toolServer = await startToolServer((_request, res) => sendJson(res, 200, { number: 42 }), ALLOWED_TOOL_HOST);
    await Promise.all(POINTS.map(async (point) => {
      const tenant = await newTenant(`crash-${point}`);
      const tools = await Promise.all(['plan_write', 'calculator', 'ask_human'].map((b) => createBuiltinTool(tenant.key, b)));
      tools.push(await createTool(tenant.key, { name: 'fetch_number', kind: 'http', http: { method: 'GET', url: `${toolServer.origin}/number/${tenant.tenantId}` } }));
      const script = point === 'paused' ? ASK_SCRIPT : point === HTTP_STEP ? HTTP_SCRIPT : WORK_SCRIPT;
      const agentId = await publishAgent(tenant.key, 'crash', scriptedGraph(script, tools));
      // The control: the same agent's run, never interrupted (its workspace is armed only after it).
      const control = await readRun(tenant, await finishUninterrupted(tenant, agentId));
      cases.set(point, { tenant, agentId, control, runs: [] });
    }));
    for (const point of HELD) fs.writeFileSync(path.join(crashDir, 'armed', cases.get(point)!.tenant.tenantId), armedAt(point));

    const runIds = new Map<Point, string[]>();
    const started = Date.now();
    await Promise.all(POINTS.map(async (point) => {
      const { tenant, agentId } = cases.get(point)!;
      runIds.set(point, await Promise.all(Array.from({ length: RUNS_PER_POINT }, () => startRun(tenant, agentId))));
    }));

    // Every run parked: held at its point, or paused on its question.
    await waitFor('all runs held at their points', async () => {
      const held = HELD.every((point) => runIds.get(point)!.every((id) => fs.existsSync(path.join(crashDir, armedAt(point), id))));
      if (!held) return false;
      const { tenant } = cases.get('paused')!;
      const statuses = await Promise.all(runIds.get('paused')!.map(async (id) => (await call('GET', `/v1/runs/${id}`, { key: tenant.key })).body.run.status));
      return statuses.every((s) => s === 'paused');
    });
    killedPid = fs.readFileSync(path.join(crashDir, HELD_POINTS[0]!, runIds.get(HELD_POINTS[0]!)![0]!), 'utf8');
    const held = Date.now();
    await workers.stop(); // SIGKILL
    await workers.start({ AGENT_PLATFORM_CRASH_DIR: crashDir, RUN_CALLS: runCalls });

    const { tenant: asked } = cases.get('paused')!;
    await Promise.all(runIds.get('paused')!.map(async (id) => {
      const answered = await call('POST', `/v1/runs/${id}/answer`, { key: asked.key, body: { answer: ANSWER } });
      expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    }));
    await Promise.all(POINTS.map(async (point) => {
      const pointCase = cases.get(point)!;
      pointCase.runs = await Promise.all(runIds.get(point)!.map((id) => readRun(pointCase.tenant, id)));
    }));
    const seconds = (ms: number) => (ms / 1000).toFixed(1);
    console.log(
      `      (${POINTS.length * RUNS_PER_POINT} runs held or paused in ${seconds(held - started)} s, one SIGKILL, ` +
        `all ended ${seconds(Date.now() - held)} s after it)`,
    );
  });

  after(async function () {
    fs.rmSync(crashDir, { recursive: true, force: true });
    await toolServer?.close();
    if (!testWorkerPool().separateProcess) return;
    // The rest of the suite gets a worker without the crash points armed.
    await testWorkerPool().stop();
    await testWorkerPool().start();
  });

  for (const point of POINTS) {
    it(`${point}: ${RUNS_PER_POINT} runs each end once, with every event, step and token once`, async () => {
      const { control, runs } = cases.get(point)!;
      expect(runs).to.have.length(RUNS_PER_POINT);
      expectWholeRun(control);
      // Known counts and a known cost (scripted prices), so equal usage means counted once, not both unknown.
      expect(control.run.usage.total_tokens).to.be.above(0);
      expect(Number(control.run.usage.cost_usd)).to.be.above(0);
      for (const record of runs) {
        expectWholeRun(record);
        expect(record.run.output).to.equal(control.run.output);
        expect(tokensAndCost(record.run.usage), `usage of ${record.runId}`).to.deep.equal(tokensAndCost(control.run.usage));
        expect(record.steps.map(stepSummary)).to.deep.equal(control.steps.map(stepSummary));
        expect(eventTypes(record.frames).filter((t) => t !== 'message.delta' && t !== 'attempt.reset')).to.deep.equal(
          eventTypes(control.frames).filter((t) => t !== 'message.delta'),
        );
        // The workflow ends as the run did (a worker that began it again after its end was committed ends it as recorded).
        const workflow = testPlatform().temporal.workflow.getHandle(record.runId);
        await waitFor(`${record.runId}'s workflow closed`, async () => (await workflow.describe()).status.name !== 'RUNNING', 60_000);
        expect((await workflow.describe()).status.name, `${record.runId}'s workflow`).to.equal('COMPLETED');
        // Queued by finishRun in the transaction that recorded the end, so a kill after it loses nothing.
        await waitFor(`${record.runId}'s history archived`, async () => (await archivedAndDequeued(record.runId)), 60_000);
        if (point === 'paused') continue;
        // Held in the killed worker, let through by the next one: the kill, not a timeout, ended the hold
        // (a hold longer than a bookkeeping activity's 30 s start-to-close timeout is retried on its own worker).
        const marker = path.join(crashDir, armedAt(point), record.runId);
        expect(fs.readFileSync(marker, 'utf8'), `${record.runId} held by the killed worker`).to.equal(killedPid);
        if (point === HTTP_STEP) {
          // The worker died after the step's end was committed: the next one answers it without calling again.
          const { tenant } = cases.get(point)!;
          const calls = toolServer.requests.filter((r) => r.url === `/number/${tenant.tenantId}`);
          expect(calls, `calls of the HTTP tool in ${tenant.tenantId}`).to.have.length(RUNS_PER_POINT + 1);
          expect(record.steps[0].result).to.deep.equal({ number: 42 });
        }
        if (point === 'model-turn.unrecorded') {
          // The next worker answered the turn its predecessor had recorded, without asking the model again
          // (a retry that asks again starts with attempt.reset): nothing reset, nothing streamed twice.
          expect(eventTypes(record.frames)).to.not.include('attempt.reset');
          for (const completed of record.frames.filter((f) => f.event === 'message.completed')) {
            const streamed = record.frames.filter((f) => f.event === 'message.delta' && f.data.turn === completed.data.turn).map((f) => f.data.delta);
            expect(streamed.join('')).to.equal(completed.data.text);
          }
        }
        // With local calls the next worker begins a run whose end was committed again, and ends it as
        // recorded (activities/runs/lifecycle.ts beginRun): it never comes back to finishRun.
        if (runCalls === 'local' && point === 'finish-run.after-commit') continue;
        // The run's next arrival at the point (the model-turn point's next turn) passed on the next worker.
        // After a commit the run reads as ended before that retry comes (up to a start-to-close timeout later).
        await waitFor(`${record.runId} let through at ${point}`, async () => fs.existsSync(`${marker}.passed`), 60_000);
        expect(fs.readFileSync(`${marker}.passed`, 'utf8'), `${record.runId} let through by the next worker`).to.not.equal(killedPid);
      }
    });
  }
});

/** Whether the archiver stored the run's history and took it off the queue. */
async function archivedAndDequeued(runId: string): Promise<boolean> {
  const { db } = testPlatform();
  const stored = await db.selectFrom('run_histories').select('run_id').where('run_id', '=', runId).executeTakeFirst();
  const queued = await db.selectFrom('run_history_queue').select('run_id').where('run_id', '=', runId).executeTakeFirst();
  return stored !== undefined && queued === undefined;
}

/** Once the run has ended (its stream from the start ends then): the stream, its record, its events as stored. */
async function readRun(tenant: TestTenant, runId: string): Promise<RunRecord> {
  const { frames } = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key, hangUpAfterMs: 150_000 });
  const { body } = await call('GET', `/v1/runs/${runId}`, { key: tenant.key });
  const stored = await withTenant(testPlatform().db, tenant.tenantId, (tx) =>
    tx.selectFrom('run_events').select(['seq', 'type']).where('run_id', '=', runId).orderBy('seq').execute(),
  );
  return { runId, run: body.run, steps: body.steps, frames, stored: stored.map((e) => ({ seq: Number(e.seq), type: e.type })) };
}

/** Once completed, once started, each step's two events once, ids 1..n, the stream the same as the stored log. */
function expectWholeRun({ runId, run, steps, frames, stored }: RunRecord): void {
  const types = eventTypes(frames);
  const count = (type: string) => types.filter((t) => t === type).length;
  expect(run.status, runId).to.equal('completed');
  expect(count('run.started'), runId).to.equal(1);
  expect(count('run.completed'), runId).to.equal(1);
  expect(types.at(-1), runId).to.equal('run.completed');
  expect(frames.map((f) => f.id), runId).to.deep.equal(frames.map((_, i) => i + 1));
  expect(stored, runId).to.deep.equal(frames.map((f) => ({ seq: f.id, type: f.event })));
  expect(steps.map((s) => s.index), runId).to.deep.equal(steps.map((_, i) => i));
  for (const step of steps) {
    expect(step.status, `${runId} step ${step.index}`).to.equal('completed');
    for (const type of ['tool_call.started', 'tool_call.completed']) {
      expect(frames.filter((f) => f.event === type && f.data.step_index === step.index), `${runId} ${type} ${step.index}`).to.have.length(1);
    }
  }
  const turns = frames.filter((f) => f.event === 'message.completed').map((f) => f.data.turn);
  expect(turns, runId).to.deep.equal([...new Set(turns)]);
}

const eventTypes = (frames: SseFrame[]) => frames.map((f) => f.event);
/** Usage without the duration, which differs from run to run. */
const tokensAndCost = (u: any) => ({ prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens, cost_usd: u.cost_usd });
const stepSummary = (s: any) => ({ index: s.index, tool: s.tool, status: s.status, arguments: s.arguments, result: s.result });

/** Starts a run and answers its id as soon as the stream names it. */
async function startRun(tenant: TestTenant, agentId: string): Promise<string> {
  const { frames, status, body } = await stream('POST', `/v1/agents/${agentId}/runs`, {
    key: tenant.key,
    body: { input: 'What is six times seven?' },
    until: (f) => f.event === 'run.created',
  });
  expect(status, JSON.stringify(body)).to.equal(200);
  return frames[0]!.data.run_id;
}

/** A run of the agent to its end, its question (if any) answered the way the held runs' are. */
async function finishUninterrupted(tenant: TestTenant, agentId: string): Promise<string> {
  const first = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'What is six times seven?' } });
  const runId: string = first.frames[0]!.data.run_id;
  if (first.frames.at(-1)!.event === 'run.paused') {
    expect((await call('POST', `/v1/runs/${runId}/answer`, { key: tenant.key, body: { answer: ANSWER } })).status).to.equal(200);
    await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key, headers: { 'last-event-id': String(first.frames.at(-1)!.id) } });
  }
  return runId;
}

async function waitFor(what: string, done: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
