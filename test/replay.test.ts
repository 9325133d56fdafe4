import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/** A real run's history, committed so that a non-deterministic change to agentRun fails this suite. */
const FIXTURE = path.resolve('test/fixtures/agent-run-history.json');
const DRIFTED_WORKFLOWS = fileURLToPath(new URL('./fixtures/drifted-workflows/index.js', import.meta.url));

describe('replay', () => {
  let key: string;
  let agentId: string;
  before(async () => {
    ({ key } = await newTenant('replay'));
    const calculator = await createTool(key, { name: 'calculator', kind: 'builtin', builtin: 'calculator' });
    const planWrite = await createTool(key, { name: 'plan_write', kind: 'builtin', builtin: 'plan_write' });
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

  it('stores a finished run’s history in Postgres and replays it deterministically', async () => {
    const runId = await finishedRun();
    const response = await replay(runId);
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ run_id: runId, deterministic: true, error: null });
    expect(response.body.event_count).to.be.greaterThan(20);

    if (process.env.RECORD_HISTORY_FIXTURE) {
      // RECORD_HISTORY_FIXTURE=1 npm test -- --grep replay: after an intended change of agentRun.
      const stored = await testPlatform().db.selectFrom('run_histories').select('history').where('run_id', '=', runId).executeTakeFirstOrThrow();
      fs.writeFileSync(FIXTURE, JSON.stringify(stored.history, null, 1) + '\n');
    }
  });

  it('replays the committed history fixture against the current workflow code', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    await Worker.runReplayHistory({ workflowBundle: await testPlatform().workflowBundle() }, history);
  });

  it('catches a non-deterministic change: the fixture fails against an altered workflow', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    const drifted = await bundleWorkflowCode({ workflowsPath: DRIFTED_WORKFLOWS, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
    const error = await Worker.runReplayHistory({ workflowBundle: drifted }, history).then(() => undefined, (err: Error) => err);
    expect(error?.name).to.equal('DeterminismViolationError');
  });
});
