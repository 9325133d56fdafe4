import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { serviceConfigFromEnv } from '../api/config.js';
import { startsEagerly } from '../activities/eager-start.js';
import { startAgentRunWorkflow } from '../activities/runs/start-run-workflow.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { createQueuedRun } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { startPlatform, type Platform } from '../workers/platform.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { settledRun } from './support/channels.js';
import { testPlatform } from './support/global.js';

/**
 * The one-process platform (`npm start`) builds its API's Temporal client on its workers' connection, so
 * a run's first workflow task comes back in the start's reply to its own worker (activities/eager-start.ts).
 * A second platform is started here beside the test platform, on its Temporal server and Postgres.
 */
describe('eager start of runs in the one-process platform', function () {
  this.timeout(120_000);
  let platform: Platform | undefined;
  let dataDir: string;
  let tenant: TestTenant;
  let agentId: string;
  let askerId: string;

  before(async function () {
    if (!process.env.DATABASE_URL) {
      console.log('      (skipped: needs DATABASE_URL, i.e. the suite on Postgres; a second platform cannot open the embedded PGlite the test platform holds)');
      return this.skip();
    }
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-eager-'));
    platform = await startPlatform({
      service: {
        ...serviceConfigFromEnv(),
        host: '127.0.0.1',
        port: 0,
        temporalAddress: testPlatform().temporalAddress,
        temporalNamespace: testPlatform().temporal.options.namespace,
        initWorkspace: 'eager-start',
        initApiKey: undefined,
      },
      database: databaseConfigFromEnv(),
      dataDir,
    });
    tenant = await newTenant('eager');
    agentId = await publishAgent(tenant.key, 'eager', scriptedGraph([{ text: 'started eagerly' }]));
    const askHuman = await createBuiltinTool(tenant.key, 'ask_human');
    askerId = await publishAgent(tenant.key, 'asker', scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] }, { text: 'Noted.' }], [askHuman]));
  });

  /** A request to the second platform's API, answered as text. */
  async function request(method: string, requestPath: string, body?: unknown): Promise<{ status: number; text: string }> {
    const response = await fetch(platform!.apiUrl + requestPath, {
      method,
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  }

  /** A run of the asker started through the second platform's API, read to its pause. */
  async function pausedRun(): Promise<string> {
    const started = await request('POST', `/v1/agents/${askerId}/runs`, { input: 'pick a colour' });
    expect(started.status).to.equal(200);
    expect(started.text).to.include('event: run.paused');
    return /"run_id":"(run_[^"]+)"/.exec(started.text)![1]!;
  }

  after(async () => {
    await platform?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function recordedRun(): Promise<{ tenantId: string; runId: string; agentId: string; source: 'api' }> {
    const queued = await withTenant(testPlatform().db, tenant.tenantId, (tx) => createQueuedRun(tx, { tenantId: tenant.tenantId, agentId, input: 'hello', source: 'api' }));
    if (!queued.queued) throw new Error(queued.reason);
    return { tenantId: tenant.tenantId, runId: queued.runId, agentId, source: 'api' };
  }

  it("hands a run's first task to its own worker in the start's reply, and the run completes", async () => {
    expect(startsEagerly(platform!.temporal)).to.equal(true);
    const run = await recordedRun();
    expect(await startAgentRunWorkflow(platform!.temporal, run)).to.deep.equal({ eagerlyStarted: true });
    expect(await settledRun(tenant.key, run.runId)).to.include({ status: 'completed', output: 'started eagerly' });
  });

  it('streams a run started through its API to the end', async () => {
    const started = await request('POST', `/v1/agents/${agentId}/runs`, { input: 'hello' });
    expect(started.status).to.equal(200);
    expect(started.text).to.include('event: run.created').and.include('event: run.completed').and.include('started eagerly');
  });

  // Its client is on the workers' connection for everything else too: answers (workflow updates), cancels.
  it('takes an answer to a paused run, and cancels another, through its API', async () => {
    const answeredRun = await pausedRun();
    const answer = await request('POST', `/v1/runs/${answeredRun}/answer`, { answer: 'blue' });
    expect(answer.status, answer.text).to.equal(200);
    expect(await settledRun(tenant.key, answeredRun)).to.include({ status: 'completed', output: 'Noted.' });

    const cancelledRun = await pausedRun();
    expect((await request('POST', `/v1/runs/${cancelledRun}/cancel`)).status).to.equal(202);
    const deadline = Date.now() + 20_000;
    let status = 'paused';
    while (status === 'paused' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (await call('GET', `/v1/runs/${cancelledRun}`, { key: tenant.key })).body.run.status;
    }
    expect(status).to.equal('cancelled');
  });

  it('starts the ordinary way on a client with a connection of its own (the API in a process without workers)', async () => {
    const connection = await Connection.connect({ address: testPlatform().temporalAddress });
    try {
      const client = new Client({ connection, namespace: testPlatform().temporal.options.namespace });
      expect(startsEagerly(client)).to.equal(false);
      const run = await recordedRun();
      expect(await startAgentRunWorkflow(client, run)).to.deep.equal({ eagerlyStarted: false });
      expect(await settledRun(tenant.key, run.runId)).to.include({ status: 'completed' });
    } finally {
      await connection.close();
    }
  });
});
