import { expect } from 'chai';
import net from 'node:net';
import { liveStreams } from '../api/live-stream.js';
import { openStreamCount } from '../api/stream-slots.js';
import { insertDeploymentThread } from '../db/deployments.js';
import { findRun } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { recordRunningRun } from './support/recorded-run.js';
import { until } from './support/until.js';

/**
 * api/stream-slots.ts: the event streams one workspace, its visitors together and one visitor may hold
 * open at once on an API process. The limits are read per request, so each test sets them for itself on
 * the shared test platform; the streams are real requests over HTTP, of runs recorded as running without
 * a workflow (they stay open until hung up).
 */
describe('event streams per workspace and visitor', () => {
  const SETTINGS = ['STREAMS_PER_WORKSPACE', 'STREAMS_PER_VISITOR'] as const;
  const saved = Object.fromEntries(SETTINGS.map((name) => [name, process.env[name]]));
  let tenant: TestTenant;
  let agentId: string;
  let runId: string;
  const held: Array<{ close(): void }> = [];

  before(async () => {
    tenant = await newTenant('stream-slots');
    agentId = await publishAgent(tenant.key, 'slots', scriptedGraph([{ text: 'hello' }]));
    runId = await liveRun(tenant.tenantId, agentId);
  });

  afterEach(async () => {
    for (const name of SETTINGS) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    for (const stream of held.splice(0)) stream.close();
    await until(() => openStreamCount(tenant.tenantId) === 0 && liveStreams.open === 0);
  });

  function limit(workspace: number, visitor?: number) {
    process.env.STREAMS_PER_WORKSPACE = String(workspace);
    if (visitor !== undefined) process.env.STREAMS_PER_VISITOR = String(visitor);
  }

  /** Opens a stream and keeps it open (its first frame read) until closed. */
  async function open(key: string, path: string, headers: Record<string, string> = {}): Promise<void> {
    const controller = new AbortController();
    const response = await fetch(testPlatform().apiUrl + path, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: controller.signal });
    expect(response.status, `${path} opens`).to.equal(200);
    await response.body!.getReader().read();
    held.push({ close: () => controller.abort() });
  }

  const runEvents = (id = runId) => `/v1/runs/${id}/events`;

  it('answers 429 with Retry-After beyond the limit, on every stream operation, and starts no run when refusing one', async () => {
    limit(3);
    for (let i = 0; i < 3; i++) await open(tenant.key, runEvents());
    expect(openStreamCount(tenant.tenantId)).to.equal(3);

    const refused = await call('GET', runEvents(), { key: tenant.key });
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await call('GET', '/v1/evals/experiments/exp_whatever/events', { key: tenant.key })).status).to.equal(429);

    const runsBefore = await countRuns(tenant.tenantId);
    const start = await call('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'refused' } });
    expect(start.status).to.equal(429);
    expect(start.body.error.code).to.equal('rate_limited');
    expect(await countRuns(tenant.tenantId)).to.equal(runsBefore);
    // The refusals hold nothing.
    expect(openStreamCount(tenant.tenantId)).to.equal(3);
  });

  it("leaves other workspaces' streams alone", async () => {
    limit(1);
    await open(tenant.key, runEvents());
    const other = await newTenant('stream-slots-other');
    const otherRun = await liveRun(other.tenantId, await publishAgent(other.key, 'slots-other', scriptedGraph([{ text: 'never run' }])));
    await open(other.key, runEvents(otherRun));
    expect(openStreamCount(other.tenantId)).to.equal(1);
    held.pop()!.close();
    await until(() => openStreamCount(other.tenantId) === 0);
  });

  it('gives the place back when a stream ends, when the client hangs up, and when the request fails', async () => {
    limit(2);
    await open(tenant.key, runEvents());
    await open(tenant.key, runEvents());
    held.shift()!.close();
    await until(() => openStreamCount(tenant.tenantId) === 1);
    await open(tenant.key, runEvents());
    expect(openStreamCount(tenant.tenantId)).to.equal(2);

    for (const stream of held.splice(0)) stream.close();
    await until(() => openStreamCount(tenant.tenantId) === 0);
    expect((await call('GET', '/v1/runs/run_unknown/events', { key: tenant.key })).status).to.equal(404);
    expect((await call('GET', '/v1/evals/experiments/exp_unknown/events', { key: tenant.key })).status).to.equal(404);
    const finished = await call('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hello' } });
    expect(finished.status).to.equal(200);
    await until(() => openStreamCount(tenant.tenantId) === 0);
  });

  it('gives back the place of a request pipelined behind an open stream when the connection closes', async () => {
    const { hostname, port } = new URL(testPlatform().apiUrl);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const request = `GET ${runEvents()} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${tenant.key}\r\n\r\n`;
    socket.write(request + request);
    // The second request's handler runs while the first response is still open; its own response is
    // queued behind it and closes only with the connection.
    await until(() => openStreamCount(tenant.tenantId) === 2);
    socket.destroy();
    await until(() => openStreamCount(tenant.tenantId) === 0);
    // Nor does the server go on following the run for either.
    await until(() => liveStreams.open === 0);
  });

  it('does not count a request whose client hung up before its handler ran', async () => {
    // A key no request has used yet: its lookup goes to the database, so the hang-up is seen first.
    const fresh = (await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard', name: 'hangs up' } })).body.key as string;
    const { hostname, port } = new URL(testPlatform().apiUrl);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const started = liveStreams.started;
    socket.end(`GET ${runEvents()} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${fresh}\r\n\r\n`);
    // The handler ran to its stream (past the slot), which ended at once: its client is gone.
    await until(() => liveStreams.started === started + 1 && liveStreams.open === 0);
    // Had the place been taken after the response closed, it would never come back (when the handler
    // happens to run before the hang-up is seen, the place is taken and given back: no leak either).
    await until(() => openStreamCount(tenant.tenantId) === 0);
  });

  describe("a deployment's visitors", () => {
    let publishableKey: string;
    let deploymentId: string;

    before(async () => {
      const created = await call('POST', '/v1/deployments', { key: tenant.key, body: { agent: agentId, slug: `slots-${Math.random().toString(36).slice(2, 8)}` } });
      expect(created.status).to.equal(201);
      publishableKey = created.body.deployment.publishable_key;
      deploymentId = created.body.deployment.id;
    });

    /** A live run of a visitor's thread, and the visitor's token for it. */
    async function visitorsRun(): Promise<{ path: string; headers: Record<string, string> }> {
      const db = testPlatform().db;
      const id = await liveRun(tenant.tenantId, agentId, deploymentId);
      const token = await withTenant(db, tenant.tenantId, async (tx) => insertDeploymentThread(tx, tenant.tenantId, deploymentId, (await findRun(tx, tenant.tenantId, id))!.thread_id));
      return { path: runEvents(id), headers: { 'x-visitor-token': token } };
    }

    /** Opens two streams of the visitor's run; a third is refused: the refusal's message. */
    async function thirdRefusal(run: { path: string; headers: Record<string, string> }): Promise<string> {
      await open(publishableKey, run.path, run.headers);
      await open(publishableKey, run.path, run.headers);
      const refused = await call('GET', run.path, { key: publishableKey, headers: run.headers });
      expect(refused.status).to.equal(429);
      return refused.body.error.message as string;
    }

    it('may each hold STREAMS_PER_VISITOR streams', async () => {
      limit(100, 2);
      const run = await visitorsRun();
      expect(await thirdRefusal(run)).to.match(/this address/);
      // Starting a run answers a stream: refused the same way, before anything is recorded.
      const runsBefore = await countRuns(tenant.tenantId);
      expect((await call('POST', `/v1/agents/${agentId}/runs`, { key: publishableKey, body: { input: 'refused' } })).status).to.equal(429);
      expect(await countRuns(tenant.tenantId)).to.equal(runsBefore);
      // The workspace's own keys are not the visitor's.
      await open(tenant.key, run.path);
    });

    it("may hold half of the workspace's streams together, so the workspace's keys keep the rest", async () => {
      limit(4, 100);
      expect(await thirdRefusal(await visitorsRun())).to.match(/visitors/);
      await open(tenant.key, runEvents());
      await open(tenant.key, runEvents());
      expect(openStreamCount(tenant.tenantId)).to.equal(4);
    });
  });
});

/** A running run (of a deployment's visitor when `deploymentId` is given): its stream stays open. */
function liveRun(tenantId: string, agentId: string, deploymentId?: string): Promise<string> {
  return recordRunningRun(testPlatform().db, { tenantId, agentId, input: 'x', ...(deploymentId ? { source: 'deployment', deploymentId } : { source: 'api' }) });
}

async function countRuns(tenantId: string): Promise<number> {
  const { count } = await testPlatform()
    .db.selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(count);
}
