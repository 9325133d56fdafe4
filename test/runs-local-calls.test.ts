import { expect } from 'chai';
import { runCallsFromEnv } from '../activities/runs/run-calls.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform, testWorkerPool } from './support/global.js';
import { stream, type SseFrame } from './support/sse.js';

/**
 * RUN_CALLS=local (activities/runs/run-calls.ts): model turns and tool calls as local activities. What
 * it must keep from activities: the same run, a run that keeps its way across workers with the other
 * setting, an answer that returns once the run is running again, and a cancel that reaches a long turn.
 * Crashes in this mode: test/runs-crash-points.test.ts.
 */
describe('runs: model turns and tool calls as local activities (RUN_CALLS=local)', function () {
  this.timeout(120_000);
  let tenant: TestTenant;
  let calculator: string;
  let askHuman: string;

  before(async () => {
    tenant = await newTenant('local-calls');
    calculator = await createBuiltinTool(tenant.key, 'calculator');
    askHuman = await createBuiltinTool(tenant.key, 'ask_human');
    await restartWorkers('local');
  });

  after(async () => {
    // The rest of the suite gets workers with the default setting.
    await restartWorkers(undefined);
  });

  it('runs the same run, its calls as markers in its history rather than scheduled activities', async () => {
    const agentId = await publishAgent(
      tenant.key,
      'local-calculator',
      scriptedGraph([{ tool_calls: [{ tool: 'calculator', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }], [calculator]),
    );
    const { frames } = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'six times seven?' } });
    const runId = frames[0]!.data.run_id as string;
    expect(eventTypes(frames).filter((t) => t !== 'message.delta')).to.deep.equal([
      'run.created',
      'run.started',
      'message.completed',
      'tool_call.started',
      'tool_call.completed',
      'message.completed',
      'run.completed',
    ]);
    expect(frames.find((f) => f.event === 'tool_call.completed')!.data.result).to.deep.equal({ result: 42 });
    const { body } = await call('GET', `/v1/runs/${runId}`, { key: tenant.key });
    expect(body.run.output).to.equal('It is 42.');
    expect(body.run.usage.total_tokens).to.be.above(0);

    const history = await historyOf(runId);
    expect(scheduledActivities(history)).to.deep.equal([]);
    // beginRun, two model turns, the tool call, finishRun.
    expect(markers(history)).to.equal(5);
  });

  it('answers the answer once the run runs again, before its next model turn ends', async () => {
    const agentId = await publishAgent(
      tenant.key,
      'local-ask',
      scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which?' } }] }, { text: 'Thanks for that answer.', delay_ms: 3000 }], [askHuman]),
    );
    const runId = await pausedRun(agentId);
    const answered = await call('POST', `/v1/runs/${runId}/answer`, { key: tenant.key, body: { answer: 'this one' } });
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    const types = await storedEventTypes(runId);
    expect(types).to.include('run.resumed');
    // The next turn takes 3 s; the answer did not wait for it.
    expect(types.filter((t) => t === 'message.completed')).to.have.length(1);
    expect((await finishedRun(runId)).status).to.equal('completed');
  });

  it('keeps the way a run began with when a worker with the other setting carries it on', async () => {
    const agentId = await publishAgent(
      tenant.key,
      'local-switch',
      scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Go on?' } }] }, { text: 'Done.' }], [askHuman]),
    );
    // Began with local calls, carried on by a worker with activities: the last turn is still local.
    const local = await pausedRun(agentId);
    await restartWorkers('activities');
    // Began with activities, carried on by a worker with local calls: the last turn is still an activity.
    const activities = await pausedRun(agentId);
    await restartWorkers('local');
    for (const runId of [local, activities]) {
      const answered = await call('POST', `/v1/runs/${runId}/answer`, { key: tenant.key, body: { answer: 'yes' } });
      expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
      expect((await finishedRun(runId)).output).to.equal('Done.');
    }
    expect(scheduledActivities(await historyOf(local))).to.deep.equal(['pauseRun']);
    expect(scheduledActivities(await historyOf(activities))).to.deep.equal(['callModel', 'pauseRun', 'callModel']);
  });

  it('cancels during a long model turn: the local call is aborted, not waited out', async () => {
    const slowText = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const agentId = await publishAgent(tenant.key, 'local-slow', scriptedGraph([{ text: slowText, delay_ms: 60_000 }]));
    let runId = '';
    let cancelled = false;
    const started = Date.now();
    const { frames } = await stream('POST', `/v1/agents/${agentId}/runs`, {
      key: tenant.key,
      body: { input: 'take your time' },
      onFrame: async (frame) => {
        if (frame.event === 'run.created') runId = frame.data.run_id;
        if (frame.event === 'message.delta' && !cancelled) {
          cancelled = true;
          expect((await call('POST', `/v1/runs/${runId}/cancel`, { key: tenant.key })).status).to.equal(202);
        }
      },
    });
    expect(eventTypes(frames).at(-1)).to.equal('run.cancelled');
    expect(eventTypes(frames)).to.not.include('message.completed');
    // The cancel reaches a run between calls or at its workflow task's heartbeat (~8 s), well before the turn's 60 s.
    expect(Date.now() - started).to.be.below(30_000);
    expect((await finishedRun(runId)).status).to.equal('cancelled');
  });

  async function restartWorkers(runCalls: 'activities' | 'local' | undefined): Promise<void> {
    const workers = testWorkerPool();
    await workers.stop();
    await workers.start(runCalls ? { RUN_CALLS: runCalls } : {});
  }

  async function pausedRun(agentId: string): Promise<string> {
    const { frames } = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'ask me' } });
    expect(eventTypes(frames).at(-1)).to.equal('run.paused');
    return frames[0]!.data.run_id as string;
  }

  async function finishedRun(runId: string): Promise<any> {
    await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    return (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run;
  }

  async function storedEventTypes(runId: string): Promise<string[]> {
    const rows = await withTenant(testPlatform().db, tenant.tenantId, (tx) =>
      tx.selectFrom('run_events').select('type').where('run_id', '=', runId).orderBy('seq').execute(),
    );
    return rows.map((r) => r.type);
  }
});

describe('RUN_CALLS', () => {
  it('is activities unless set to local, and refuses anything else at startup', () => {
    expect(runCallsFromEnv({})).to.equal('activities');
    expect(runCallsFromEnv({ RUN_CALLS: '' })).to.equal('activities');
    expect(runCallsFromEnv({ RUN_CALLS: 'activities' })).to.equal('activities');
    expect(runCallsFromEnv({ RUN_CALLS: ' local ' })).to.equal('local');
    expect(() => runCallsFromEnv({ RUN_CALLS: 'LOCAL' })).to.throw("RUN_CALLS must be 'activities' or 'local', not 'LOCAL'");
  });
});

type History = Awaited<ReturnType<ReturnType<ReturnType<typeof testPlatform>['temporal']['workflow']['getHandle']>['fetchHistory']>>;

/** The history of a run's closed workflow (the run's last event is written before its workflow task completes). */
async function historyOf(runId: string): Promise<History> {
  const workflow = testPlatform().temporal.workflow.getHandle(runId);
  await workflow.result();
  return workflow.fetchHistory();
}

/** The activities the run scheduled through the server, in order. */
function scheduledActivities(history: History): string[] {
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType!.name!] : []));
}

/** The local activities the run recorded. */
function markers(history: History): number {
  return (history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length;
}

const eventTypes = (frames: SseFrame[]) => frames.map((f) => f.event);
