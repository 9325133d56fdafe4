import { expect } from 'chai';
import { openStreamCount } from '../api/stream-slots.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { recordRunningRun } from './support/recorded-run.js';
import { until } from './support/until.js';

/**
 * api/stream-slots.ts: the event streams one workspace may hold open at once on an API process. The
 * limit is read per request, so the test lowers it for its own workspaces on the shared test platform;
 * the streams are real GET /v1/runs/{id}/events over HTTP, of runs recorded as running without a
 * workflow (they stay open until hung up).
 */
describe('event streams per workspace', () => {
  const LIMIT = 3;
  let tenant: TestTenant;
  let other: TestTenant;
  let agentId: string;
  let runId: string;
  let previous: string | undefined;
  const held: Array<{ close(): void }> = [];

  before(async () => {
    tenant = await newTenant('stream-slots');
    other = await newTenant('stream-slots-other');
    agentId = await publishAgent(tenant.key, 'slots', scriptedGraph([{ text: 'never run' }]));
    runId = await recordRunningRun(testPlatform().db, { tenantId: tenant.tenantId, agentId, input: 'x', source: 'api' });
    previous = process.env.STREAMS_PER_WORKSPACE;
    process.env.STREAMS_PER_WORKSPACE = String(LIMIT);
  });

  after(async () => {
    for (const stream of held.splice(0)) stream.close();
    if (previous === undefined) delete process.env.STREAMS_PER_WORKSPACE;
    else process.env.STREAMS_PER_WORKSPACE = previous;
  });

  /** Opens a stream and keeps it open (its first frame read) until closed. */
  async function open(key: string, path: string): Promise<{ close(): void }> {
    const controller = new AbortController();
    const response = await fetch(testPlatform().apiUrl + path, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal });
    expect(response.status, `${path} opens`).to.equal(200);
    const reader = response.body!.getReader();
    await reader.read();
    const stream = { close: () => controller.abort() };
    held.push(stream);
    return stream;
  }

  const runEvents = () => `/v1/runs/${runId}/events`;

  it('answers 429 with Retry-After beyond the limit, on every stream operation, and starts no run when refusing one', async () => {
    for (let i = 0; i < LIMIT; i++) await open(tenant.key, runEvents());
    expect(openStreamCount(tenant.tenantId)).to.equal(LIMIT);

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
    expect(openStreamCount(tenant.tenantId)).to.equal(LIMIT);
  });

  it("leaves other workspaces' streams alone", async () => {
    const otherAgent = await publishAgent(other.key, 'slots-other', scriptedGraph([{ text: 'never run' }]));
    const otherRun = await recordRunningRun(testPlatform().db, { tenantId: other.tenantId, agentId: otherAgent, input: 'x', source: 'api' });
    await open(other.key, `/v1/runs/${otherRun}/events`);
    expect(openStreamCount(other.tenantId)).to.equal(1);
  });

  it('gives the place back when a stream ends, and when a request that took one fails', async () => {
    held.shift()!.close();
    await until(() => openStreamCount(tenant.tenantId) === LIMIT - 1);
    await open(tenant.key, runEvents());
    expect(openStreamCount(tenant.tenantId)).to.equal(LIMIT);

    for (const stream of held.splice(0)) stream.close();
    await until(() => openStreamCount(tenant.tenantId) === 0);
    expect((await call('GET', '/v1/runs/run_unknown/events', { key: tenant.key })).status).to.equal(404);
    const finished = await call('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hello' } });
    expect(finished.status).to.equal(200);
    await until(() => openStreamCount(tenant.tenantId) === 0);
  });
});

async function countRuns(tenantId: string): Promise<number> {
  const { count } = await testPlatform()
    .db.selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(count);
}
