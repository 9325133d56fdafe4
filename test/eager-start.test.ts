import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { expect } from 'chai';
import { serviceConfigFromEnv } from '../api/config.js';
import { startsEagerly } from '../activities/eager-start.js';
import { startAgentRunWorkflow } from '../activities/runs/start-run-workflow.js';
import { databaseConfigFromEnv, type DatabaseConfig } from '../db/config.js';
import { createTenant } from '../db/tenants.js';
import { startPlatform, type Platform } from '../workers/platform.js';
import { scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { freePort } from './support/ports.js';
import { recordQueuedRun } from './support/recorded-run.js';

/**
 * The one-process platform (`npm start`) starts runs with a client on its workers' connection, so a
 * run's first workflow task comes back in the start's reply to its own worker (activities/eager-start.ts).
 * A second whole platform is started here. On Postgres it shares the test platform's database and
 * Temporal server; on PGlite, whose database belongs to the test platform, it has a database and a
 * Temporal dev server of its own (so that the test platform's workers take none of its tasks).
 */
describe('eager start of runs in the one-process platform', function () {
  this.timeout(180_000);
  let platform: Platform;
  let dataDir: string;
  let tenantId: string;
  let key: string;
  let agentId: string;
  let askerId: string;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-eager-'));
    const shared = process.env.DATABASE_URL !== undefined;
    const database: DatabaseConfig = shared ? databaseConfigFromEnv() : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
    const temporal = shared ? { temporalAddress: testPlatform().temporalAddress, temporalNamespace: testPlatform().temporal.options.namespace } : { temporalAddress: undefined };
    platform = await startPlatform({
      service: { ...serviceConfigFromEnv(), host: '127.0.0.1', port: 0, ...temporal, initWorkspace: 'eager-start', initApiKey: undefined },
      database,
      dataDir,
      temporalDev: { port: await freePort(), ui_port: await freePort(), db_file: null },
    });
    const workspace = await createTenant(platform.db, `eager-${Math.random().toString(36).slice(2, 8)}`);
    tenantId = workspace.tenant.id;
    key = workspace.apiKey;
    agentId = await publishAgent('eager', scriptedGraph([{ text: 'started eagerly' }]));
    const askHuman = await request('POST', '/v1/tools', { name: 'ask_human', kind: 'builtin', builtin: 'ask_human' });
    expect(askHuman.status, askHuman.text).to.equal(201);
    const askHumanId = JSON.parse(askHuman.text).tool.id as string;
    askerId = await publishAgent('asker', scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] }, { text: 'Noted.' }], [askHumanId]));
  });

  after(async () => {
    await platform?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A request to the second platform's API, answered as text. */
  async function request(method: string, requestPath: string, body?: unknown): Promise<{ status: number; text: string }> {
    const response = await fetch(platform.apiUrl + requestPath, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  }

  async function publishAgent(name: string, graph: Record<string, unknown>): Promise<string> {
    const agent = await request('POST', '/v1/agents', { name });
    expect(agent.status, agent.text).to.equal(201);
    const id = JSON.parse(agent.text).agent.id as string;
    const version = await request('POST', `/v1/agents/${id}/versions`, { graph });
    expect(version.status, version.text).to.equal(201);
    return id;
  }

  /** The run's status once it is no longer `from` (queued, running, or paused when asked). */
  async function runStatusAfter(runId: string, from: string[]): Promise<{ status: string; output: string | null }> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { status, text } = await request('GET', `/v1/runs/${runId}`);
      expect(status, text).to.equal(200);
      const run = JSON.parse(text).run;
      if (!from.includes(run.status) || Date.now() > deadline) return { status: run.status, output: run.output };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function recordedRun(): Promise<{ tenantId: string; runId: string; agentId: string; source: 'api' }> {
    const runId = await recordQueuedRun(platform.db, { tenantId, agentId, input: 'hello', source: 'api' });
    return { tenantId, runId, agentId, source: 'api' };
  }

  /** A run of the asker started through the API, read to its pause. */
  async function pausedRun(): Promise<string> {
    const started = await request('POST', `/v1/agents/${askerId}/runs`, { input: 'pick a colour' });
    expect(started.status).to.equal(200);
    expect(started.text).to.include('event: run.paused');
    return /"run_id":"(run_[^"]+)"/.exec(started.text)![1]!;
  }

  it("hands a run's first task to its own worker in the start's reply, and the run completes", async () => {
    expect(startsEagerly(platform.runStarter)).to.equal(true);
    expect(startsEagerly(platform.temporal), "the API's other calls keep a connection of their own").to.equal(false);
    const run = await recordedRun();
    expect(await startAgentRunWorkflow(platform.runStarter, run)).to.deep.equal({ eagerlyStarted: true });
    expect(await runStatusAfter(run.runId, ['queued', 'running'])).to.deep.equal({ status: 'completed', output: 'started eagerly' });
    // A second start (a channel's retry, the sweep) is refused as on any connection, and runs nothing.
    const again = await startAgentRunWorkflow(platform.runStarter, run).then(() => 'started', (err: unknown) => err);
    expect(again).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('streams a run started through its API to the end', async () => {
    const started = await request('POST', `/v1/agents/${agentId}/runs`, { input: 'hello' });
    expect(started.status).to.equal(200);
    expect(started.text).to.include('event: run.created').and.include('event: run.completed').and.include('started eagerly');
  });

  it('takes an answer to a paused run, and cancels another, through its API', async () => {
    const answeredRun = await pausedRun();
    const answer = await request('POST', `/v1/runs/${answeredRun}/answer`, { answer: 'blue' });
    expect(answer.status, answer.text).to.equal(200);
    expect(await runStatusAfter(answeredRun, ['paused', 'running'])).to.deep.equal({ status: 'completed', output: 'Noted.' });

    const cancelledRun = await pausedRun();
    expect((await request('POST', `/v1/runs/${cancelledRun}/cancel`)).status).to.equal(202);
    expect((await runStatusAfter(cancelledRun, ['paused', 'running'])).status).to.equal('cancelled');
  });

  it('starts the ordinary way on a client with a connection of its own (the API in a process without workers)', async () => {
    const connection = await Connection.connect({ address: platform.temporalAddress });
    try {
      const client = new Client({ connection, namespace: platform.temporal.options.namespace });
      expect(startsEagerly(client)).to.equal(false);
      const run = await recordedRun();
      expect(await startAgentRunWorkflow(client, run)).to.deep.equal({ eagerlyStarted: false });
      expect((await runStatusAfter(run.runId, ['queued', 'running'])).status).to.equal('completed');
    } finally {
      await connection.close();
    }
  });
});
