import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { expect } from 'chai';
import { isTemporalSpecRefusal } from '../activities/schedules/temporal-schedule.js';
import type { AppDeps } from '../api/deps.js';
import type { OperationContext } from '../api/operation.js';
import { createSchedule, updateScheduleOperation } from '../api/routes/schedules.js';
import { deleteScheduleById, insertSchedule, SCHEDULES_PER_TENANT } from '../db/schedules.js';
import { readAsTenant } from '../db/tenant-reads.js';
import { withTenant } from '../db/tenant-transaction.js';
import { TenantIdAttribute } from '../workflows/search-attributes.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/** Polls `check` until it answers something truthy, or fails after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Temporal Schedules of these workspaces (their search attribute), as Temporal's eventually consistent list has them. */
async function temporalScheduleIds(tenants: TestTenant[]): Promise<Set<string>> {
  const tenantIds = new Set(tenants.map((tenant) => tenant.tenantId));
  const ids = new Set<string>();
  for await (const schedule of testPlatform().temporal.schedule.list()) {
    if (tenantIds.has(schedule.typedSearchAttributes?.get(TenantIdAttribute) ?? '')) ids.add(schedule.scheduleId);
  }
  return ids;
}

/** A handler called directly, with a Temporal client of the test's making in place of the platform's (the failures HTTP cannot cause). */
function callHandler<P, B>(
  operation: { handler: (ctx: OperationContext<P, unknown, B>) => Promise<unknown> },
  tenant: TestTenant,
  temporal: unknown,
  request: { params: P; body: B },
) {
  return operation.handler({
    ...request,
    query: {},
    deps: { temporal: temporal as Client } as AppDeps,
    koa: undefined as never,
    caller: { tenantId: tenant.tenantId, keyId: 'direct-handler-call', kind: 'management' },
    tenant: (work) => withTenant(testPlatform().db, tenant.tenantId, work),
    tenantReads: (work) => readAsTenant(testPlatform().db, tenant.tenantId, work),
  });
}

/** An error as a timed-out gRPC call gives it: the server may have acted. */
const ambiguous = () => new Error('4 DEADLINE_EXCEEDED: Deadline exceeded');

async function describeInTemporal(id: string) {
  return testPlatform().temporal.schedule.getHandle(id).describe();
}

async function goneFromTemporal(id: string): Promise<boolean> {
  try {
    await describeInTemporal(id);
    return false;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return true;
    throw err;
  }
}

describe('schedules', function () {
  this.timeout(60_000);
  let a: TestTenant;
  let b: TestTenant;
  let agentId: string;
  let echoId: string;
  /** Every schedule the tests make, deleted at the end: a leftover would keep firing in the shared dev server. */
  const made: Array<{ id: string; key: string }> = [];
  /** A schedule of an agent the agent-deletion test deletes. */
  let doomed: { agentId: string; scheduleId: string };
  /** A schedule whose row the backstop test deletes, made first so its creation is seconds old by then. */
  let orphan: string;

  async function create(tenant: TestTenant, body: Record<string, unknown>) {
    const response = await call('POST', '/v1/schedules', { key: tenant.key, body });
    if (response.status === 201) made.push({ id: response.body.schedule.id, key: tenant.key });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body.schedule;
  }

  async function get(id: string, tenant = a) {
    const response = await call('GET', `/v1/schedules/${id}`, { key: tenant.key });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.schedule;
  }

  before(async () => {
    a = await newTenant('sched-a');
    b = await newTenant('sched-b');
    agentId = await publishAgent(a.key, 'ticker', scriptedGraph([{ text: 'tick' }]));
    echoId = await publishAgent(a.key, 'echo', { nodes: [{ id: 'main', model: 'ollama/echo' }] });
    const doomedAgent = await publishAgent(a.key, 'doomed', scriptedGraph([{ text: 'doomed' }]));
    doomed = { agentId: doomedAgent, scheduleId: (await create(a, { agent: 'doomed', input: 'x', cron: '0 0 1 1 *', paused: true })).id };
    orphan = (await create(a, { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true })).id;
  });

  after(async () => {
    for (const { id, key } of made) {
      await call('DELETE', `/v1/schedules/${id}`, { key });
      await testPlatform().temporal.schedule.getHandle(id).delete().catch(() => undefined);
    }
  });

  it('fires every second: each firing is a completed run with source "schedule" and the schedule id; pause stops it, unpause resumes it', async () => {
    const schedule = await create(a, { agent: 'ticker', input: 'tick please', every: '1s', description: 'every second' });
    expect(schedule).to.include({ agent_id: agentId, every: '1s', cron: null, time_zone: 'UTC', overlap: 'skip', jitter: null, paused: false });
    expect(schedule.next_fire_times.length).to.be.greaterThan(0);
    expect(new Date(schedule.next_fire_times[0]).getTime() - Date.now()).to.be.at.most(1_100);

    const fired = await until('two completed runs', async () => {
      const current = await get(schedule.id);
      return current.recent_runs.filter((run: { status: string }) => run.status === 'completed').length >= 2 && current;
    });
    expect(fired.stats.fired).to.be.at.least(2);
    const runs = (await call('GET', '/v1/runs?source=schedule', { key: a.key })).body.runs.filter((run: { schedule_id: string }) => run.schedule_id === schedule.id);
    expect(runs.length).to.be.at.least(2);
    for (const run of runs) expect(run).to.include({ source: 'schedule', schedule_id: schedule.id, agent_id: agentId, input: 'tick please' });
    const completed = runs.find((run: { status: string }) => run.status === 'completed');
    expect(completed.output).to.equal('tick');
    // Without a thread each firing starts its own.
    expect(new Set(runs.map((run: { thread_id: string }) => run.thread_id)).size).to.equal(runs.length);
    // Scheduled runs are ordinary runs: readable by id, in the default list too.
    expect((await call('GET', `/v1/runs/${completed.id}`, { key: a.key })).body.run.schedule_id).to.equal(schedule.id);
    expect((await call('GET', '/v1/runs', { key: a.key })).body.runs.some((run: { id: string }) => run.id === completed.id)).to.equal(true);

    const paused = await call('POST', `/v1/schedules/${schedule.id}/pause`, { key: a.key });
    expect(paused.status).to.equal(200);
    expect(paused.body.schedule).to.include({ paused: true });
    expect(paused.body.schedule.next_fire_times).to.deep.equal([]);
    expect((await describeInTemporal(schedule.id)).state.paused).to.equal(true);
    await sleep(1_500); // a firing already under way when it paused still lands
    const firedWhenPaused = (await describeInTemporal(schedule.id)).info.numActionsTaken;
    const runsWhenPaused = (await get(schedule.id)).recent_runs[0].id;
    await sleep(2_500);
    expect((await describeInTemporal(schedule.id)).info.numActionsTaken).to.equal(firedWhenPaused);
    expect((await get(schedule.id)).recent_runs[0].id).to.equal(runsWhenPaused);

    const unpaused = await call('POST', `/v1/schedules/${schedule.id}/unpause`, { key: a.key });
    expect(unpaused.body.schedule).to.include({ paused: false });
    expect((await describeInTemporal(schedule.id)).state.paused).to.equal(false);
    await until('a firing after unpause', async () => (await get(schedule.id)).recent_runs[0].id !== runsWhenPaused);

    const deleted = await call('DELETE', `/v1/schedules/${schedule.id}`, { key: a.key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: schedule.id });
    expect(await goneFromTemporal(schedule.id)).to.equal(true);
  });

  it('reads cron in its time zone, fires on trigger (even paused), and continues its thread', async () => {
    const first = await stream('POST', `/v1/agents/${echoId}/runs`, { key: a.key, body: { input: 'first question' } });
    const threadId = first.frames[0]!.data.thread_id;

    const schedule = await create(a, { agent: 'echo', input: 'scheduled question', thread_id: threadId, cron: '0 0 1 1 *', time_zone: 'Europe/Paris' });
    // Midnight on 1 January in Paris (UTC+1 in winter) is 23:00 UTC on 31 December.
    const now = new Date();
    const candidates = [now.getUTCFullYear(), now.getUTCFullYear() + 1].map((year) => new Date(Date.UTC(year - 1, 11, 31, 23)));
    const expected = candidates.find((at) => at.getTime() > now.getTime())!;
    expect(schedule.next_fire_times[0]).to.equal(expected.toISOString());
    expect(schedule.recent_runs).to.deep.equal([]);

    await call('POST', `/v1/schedules/${schedule.id}/pause`, { key: a.key });
    const triggered = await call('POST', `/v1/schedules/${schedule.id}/trigger`, { key: a.key });
    expect(triggered.status).to.equal(202);
    expect(triggered.body).to.deep.equal({ schedule_id: schedule.id, triggered: true });
    const run = await until('the triggered run to complete', async () => {
      const [latest] = (await get(schedule.id)).recent_runs;
      return latest?.status === 'completed' && latest;
    });
    expect(run.thread_id).to.equal(threadId);
    const record = (await call('GET', `/v1/runs/${run.id}`, { key: a.key })).body.run;
    // The model saw the thread's first turn before the scheduled input.
    expect(record.output).to.equal('saw user,assistant,user; last: "scheduled question"');
    const thread = await call('GET', `/v1/threads/${threadId}?agent=echo`, { key: a.key });
    expect(thread.status).to.equal(200);
    expect(JSON.stringify(thread.body)).to.include(run.id);
    expect((await get(schedule.id)).stats.fired).to.equal(1);
  });

  it('PATCH changes the Temporal Schedule; DELETE removes it', async () => {
    const schedule = await create(a, { agent: 'ticker', input: 'x', every: '1h', paused: true });
    const before = await describeInTemporal(schedule.id);
    expect(before.spec.intervals?.[0]?.every).to.equal(3_600_000);
    expect(before.policies.overlap).to.equal('SKIP');

    const patched = await call('PATCH', `/v1/schedules/${schedule.id}`, {
      key: a.key,
      body: { cron: '30 9 * * MON-FRI', time_zone: 'America/New_York', jitter: '10s', overlap: 'buffer_one', input: 'y', description: 'weekday mornings' },
    });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.schedule).to.include({ cron: '30 9 * * MON-FRI', every: null, time_zone: 'America/New_York', jitter: '10s', overlap: 'buffer_one', input: 'y', paused: true });
    const after = await describeInTemporal(schedule.id);
    expect(after.spec.intervals ?? []).to.deep.equal([]);
    const [calendar] = after.spec.calendars!;
    expect(calendar!.hour).to.deep.equal([{ start: 9, end: 9, step: 1 }]);
    expect(calendar!.minute).to.deep.equal([{ start: 30, end: 30, step: 1 }]);
    expect(calendar!.dayOfWeek).to.deep.equal([{ start: 'MONDAY', end: 'FRIDAY', step: 1 }]);
    expect(after.spec.timezone).to.equal('America/New_York');
    expect(after.spec.jitter).to.equal(10_000);
    expect(after.policies.overlap).to.equal('BUFFER_ONE');
    expect(after.state.paused).to.equal(true, 'PATCH leaves the paused state alone');

    const back = await call('PATCH', `/v1/schedules/${schedule.id}`, { key: a.key, body: { every: '90m', jitter: null } });
    expect(back.body.schedule).to.include({ cron: null, every: '90m', jitter: null });
    const again = await describeInTemporal(schedule.id);
    expect(again.spec.intervals?.[0]?.every).to.equal(5_400_000);
    expect(again.spec.calendars ?? []).to.deep.equal([]);

    const bad = await call('PATCH', `/v1/schedules/${schedule.id}`, { key: a.key, body: { cron: '99 * * * *' } });
    expect(bad.status).to.equal(400);
    expect((await describeInTemporal(schedule.id)).spec.intervals?.[0]?.every).to.equal(5_400_000);

    expect((await call('DELETE', `/v1/schedules/${schedule.id}`, { key: a.key })).status).to.equal(200);
    expect(await goneFromTemporal(schedule.id)).to.equal(true);
    expect((await call('GET', `/v1/schedules/${schedule.id}`, { key: a.key })).status).to.equal(404);
    expect((await call('DELETE', `/v1/schedules/${schedule.id}`, { key: a.key })).status).to.equal(404);
  });

  it('refuses bad definitions with 400 (409 for an agent with nothing published), creating nothing in Temporal or Postgres', async () => {
    const temporalBefore = await temporalScheduleIds([a, b]);
    const listed = async () => (await call('GET', '/v1/schedules?limit=200', { key: a.key })).body.schedules.length;
    const rowsBefore = await listed();
    const otherAgentThread = (await stream('POST', `/v1/agents/${agentId}/runs`, { key: a.key, body: { input: 'hi' } })).frames[0]!.data.thread_id;
    await call('POST', '/v1/agents', { key: a.key, body: { name: 'unpublished' } });

    const base = { agent: 'ticker', input: 'x' };
    const cases: Array<[Record<string, unknown>, string, number?]> = [
      [{ ...base, cron: '61 * * * *' }, 'body.cron'],
      [{ ...base, cron: '* * *' }, 'body.cron'],
      [{ ...base, cron: '0 0 31 13 *' }, 'body.cron'],
      [{ ...base, cron: '@every 1s' }, 'body.cron'],
      [{ ...base, cron: '@fortnightly' }, 'body.cron'],
      [{ ...base, cron: '5-1 * * * *' }, 'body.cron'],
      [{ ...base, every: '0s' }, 'body.every'],
      [{ ...base, every: 'PT' }, 'body.every'],
      [{ ...base, every: '1s', cron: '* * * * *' }, 'body.every'],
      [{ ...base }, 'body.cron'],
      [{ ...base, every: '1s', time_zone: 'Mars/Olympus_Mons' }, 'body.time_zone'],
      [{ ...base, every: '1s', time_zone: '+01:00' }, 'body.time_zone'],
      [{ ...base, every: '1s', time_zone: 'europe/paris' }, 'body.time_zone'],
      // ICU's own links: Node resolves them, the tz database (and so the server) has no such zone.
      [{ ...base, every: '1s', time_zone: 'PST' }, 'body.time_zone'],
      [{ ...base, every: '1s', time_zone: 'SystemV/EST5' }, 'body.time_zone'],
      // Node resolves them (to America/Los_Angeles), the Temporal server does not: Temporal's refusal rolls the row back.
      [{ ...base, every: '1s', time_zone: 'us/pacific' }, 'body.time_zone'],
      [{ ...base, every: '1s', time_zone: 'US/Pacific-New' }, 'body.time_zone'],
      [{ ...base, every: '1s', agent: 'nobody' }, 'body.agent'],
      [{ ...base, every: '1s', thread_id: 'thr_nonexistent' }, 'body.thread_id'],
      [{ ...base, every: '1s', agent: 'echo', thread_id: otherAgentThread }, 'body.thread_id'],
      [{ ...base, every: '1s', agent: 'unpublished' }, '', 409],
    ];
    for (const [body, field, status = 400] of cases) {
      const response = await call('POST', '/v1/schedules', { key: a.key, body });
      // One created by mistake must not keep firing after the test fails.
      if (response.status === 201) made.push({ id: response.body.schedule.id, key: a.key });
      expect(response.status, JSON.stringify(body)).to.equal(status);
      if (status === 400) {
        expect(response.body.error.code).to.equal('invalid_request');
        expect(response.body.error.fields.map((f: { field: string }) => f.field), JSON.stringify(response.body)).to.include(field);
      }
    }
    const pst = await call('POST', '/v1/schedules', { key: a.key, body: { ...base, every: '1s', time_zone: 'PST' } });
    expect(pst.body.error.message).to.include("did you mean 'America/Los_Angeles'");
    // ICU's own names are refused by the check, before Temporal is asked.
    const systemV = await call('POST', '/v1/schedules', { key: a.key, body: { ...base, every: '1s', time_zone: 'SystemV/EST5' } });
    expect(systemV.status).to.equal(400);
    expect(systemV.body.error.message).not.to.include('Temporal refused');
    // The every pattern is in the document: refused by validation before the handler.
    expect((await call('POST', '/v1/schedules', { key: a.key, body: { ...base, every: '500ms' } })).status).to.equal(400);
    // Another workspace's agent is no agent here.
    const otherWorkspace = await call('POST', '/v1/schedules', { key: b.key, body: { ...base, every: '1s' } });
    if (otherWorkspace.status === 201) made.push({ id: otherWorkspace.body.schedule.id, key: b.key });
    expect(otherWorkspace.status).to.equal(400);

    expect(await listed()).to.equal(rowsBefore);
    // Temporal's list is eventually consistent: once a schedule made after the refusals shows, the refusals would have too.
    // EST is in the tz database, unlike ICU's PST: both the check and the server take it.
    const marker = await create(a, { ...base, every: '1h', paused: true, time_zone: 'EST' });
    const temporalAfter = await until('the marker schedule in Temporal\'s list', async () => {
      const ids = await temporalScheduleIds([a, b]);
      return ids.has(marker.id) && ids;
    });
    // Schedules made through the API earlier may only now show in the list: new ones that are not among them are the refusals'.
    const madeIds = new Set(made.map(({ id }) => id));
    expect([...temporalAfter].filter((id) => !temporalBefore.has(id) && !madeIds.has(id))).to.deep.equal([]);
    expect(temporalAfter.has(marker.id)).to.equal(true);
  });

  it("answers 404 for another workspace's schedule, and lists only the caller's", async () => {
    const schedule = await create(a, { agent: 'ticker', input: 'x', every: '1h', paused: true });
    for (const [method, path, body] of [
      ['GET', `/v1/schedules/${schedule.id}`],
      ['PATCH', `/v1/schedules/${schedule.id}`, { input: 'hijack' }],
      ['POST', `/v1/schedules/${schedule.id}/pause`],
      ['POST', `/v1/schedules/${schedule.id}/unpause`],
      ['POST', `/v1/schedules/${schedule.id}/trigger`],
      ['DELETE', `/v1/schedules/${schedule.id}`],
    ] as const) {
      const response = await call(method, path, { key: b.key, body });
      expect(response.status, `${method} ${path}`).to.equal(404);
      expect(response.body.error.code).to.equal('not_found');
    }
    expect((await call('GET', '/v1/schedules', { key: b.key })).body.schedules).to.deep.equal([]);
    const mine = await get(schedule.id);
    expect(mine).to.include({ input: 'x', paused: true });
    expect(mine.stats.fired).to.equal(0);
    expect((await describeInTemporal(schedule.id)).state.paused).to.equal(true);

    const byAgent = await call('GET', '/v1/schedules?agent=ticker', { key: a.key });
    expect(byAgent.body.schedules.map((s: { id: string }) => s.id)).to.include(schedule.id);
    expect(byAgent.body.schedules.every((s: { agent_id: string }) => s.agent_id === agentId)).to.equal(true);
    expect((await call('GET', '/v1/schedules?agent=nobody', { key: a.key })).body.schedules).to.deep.equal([]);
    const firstPage = await call('GET', '/v1/schedules?limit=1', { key: a.key });
    expect(firstPage.body.schedules).to.have.length(1);
    expect(firstPage.body.next_cursor).to.be.a('string');
  });

  it('deleting the agent deletes its schedules and their Temporal Schedules, paused ones included', async () => {
    expect((await describeInTemporal(doomed.scheduleId)).state.paused).to.equal(true);
    expect((await call('DELETE', `/v1/agents/${doomed.agentId}`, { key: a.key })).status).to.equal(200);
    expect((await call('GET', `/v1/schedules/${doomed.scheduleId}`, { key: a.key })).status).to.equal(404);
    // Gone when the DELETE answers: no firing needed.
    expect(await goneFromTemporal(doomed.scheduleId)).to.equal(true);
  });

  it('a firing whose row is gone deletes its Temporal Schedule (the backstop of an agent deletion whose Temporal step failed)', async () => {
    await withTenant(testPlatform().db, a.tenantId, (tx) => deleteScheduleById(tx, a.tenantId, orphan));
    expect(await goneFromTemporal(orphan)).to.equal(false);
    // Paused, so nothing fires by itself: a trigger stands for the next firing.
    await testPlatform().temporal.schedule.getHandle(orphan).trigger();
    await until('the orphaned Temporal Schedule to be deleted', () => goneFromTemporal(orphan), 20_000);
  });

  it('counts triggers in the per-key run limit: 429 rate_limited with Retry-After once the key has used it up', async () => {
    const c = await newTenant('sched-c');
    await publishAgent(c.key, 'ticker', scriptedGraph([{ text: 'tick' }]));
    const schedule = await create(c, { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true });
    const first = await call('POST', `/v1/schedules/${schedule.id}/trigger`, { key: c.key });
    expect(first.status).to.equal(202);
    expect(first.headers.get('ratelimit-limit')).to.equal('60');
    expect(first.headers.get('ratelimit-remaining')).to.equal('59');
    // The rest of the key's 60 in the window, spent on runs (refused ones count too).
    for (let i = 0; i < 59; i++) expect((await call('POST', '/v1/agents/nobody/runs', { key: c.key, body: { input: 'x' } })).status).to.equal(404);
    const refused = await call('POST', `/v1/schedules/${schedule.id}/trigger`, { key: c.key });
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    expect(refused.headers.get('ratelimit-remaining')).to.equal('0');
    await until('the first trigger to fire', async () => (await get(schedule.id, c)).stats.fired === 1 || undefined);
    await sleep(1_000);
    expect((await get(schedule.id, c)).stats.fired).to.equal(1, 'the refused trigger fired nothing');
  });

  it(`caps a workspace at ${SCHEDULES_PER_TENANT} schedules: one more is a 409 and nothing is created`, async () => {
    const d = await newTenant('sched-d');
    const dAgent = await publishAgent(d.key, 'ticker', scriptedGraph([{ text: 'tick' }]));
    // Rows only (no Temporal Schedules, which nothing here fires): the cap counts rows.
    await withTenant(testPlatform().db, d.tenantId, async (tx) => {
      for (let i = 0; i < SCHEDULES_PER_TENANT - 1; i++) {
        const definition = { agentId: dAgent, input: 'x', threadId: null, cron: '0 0 1 1 *', every: null, timeZone: 'UTC', overlap: 'skip' as const, jitter: null, description: null };
        await insertSchedule(tx, d.tenantId, definition, true);
      }
    });
    const last = await create(d, { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true });
    const over = await call('POST', '/v1/schedules', { key: d.key, body: { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true } });
    if (over.status === 201) made.push({ id: over.body.schedule.id, key: d.key });
    expect(over.status).to.equal(409);
    expect(over.body.error.code).to.equal('conflict');
    expect(over.body.error.message).to.include(String(SCHEDULES_PER_TENANT));
    let rows = 0;
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = await call('GET', `/v1/schedules?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key: d.key });
      rows += page.body.schedules.length;
      cursor = page.body.next_cursor;
    }
    expect(rows).to.equal(SCHEDULES_PER_TENANT);
    // Deleting one makes room again.
    expect((await call('DELETE', `/v1/schedules/${last.id}`, { key: d.key })).status).to.equal(200);
    await create(d, { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true });
  });

  it('takes back a create or a PATCH whose Temporal call failed after the server acted (a timeout)', async () => {
    const real = testPlatform().temporal;
    let createdId: string | undefined;
    const creatingThenTimingOut = {
      schedule: {
        create: async (options: Parameters<Client['schedule']['create']>[0]) => {
          createdId = options.scheduleId;
          await real.schedule.create(options);
          throw ambiguous();
        },
        getHandle: (id: string) => real.schedule.getHandle(id),
      },
    };
    const body = { agent: 'ticker', input: 'ambiguous', cron: '0 0 1 1 *', paused: true };
    const failure = await callHandler(createSchedule, a, creatingThenTimingOut, { params: {}, body }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(failure)).to.include('DEADLINE_EXCEEDED');
    expect(createdId).to.match(/^sch_/);
    made.push({ id: createdId!, key: a.key });
    expect(await goneFromTemporal(createdId!)).to.equal(true, 'the Temporal Schedule the failed create made is deleted');
    expect((await call('GET', `/v1/schedules/${createdId}`, { key: a.key })).status).to.equal(404);

    const schedule = await create(a, { agent: 'ticker', input: 'x', every: '1h', paused: true });
    let timedOut = false;
    const updatingThenTimingOut = {
      schedule: {
        getHandle: (id: string) => {
          const handle = real.schedule.getHandle(id);
          return Object.assign(Object.create(handle) as typeof handle, {
            update: async (...args: Parameters<typeof handle.update>) => {
              await handle.update(...args);
              // Only the first update times out; the undo goes through.
              if (!timedOut) {
                timedOut = true;
                throw ambiguous();
              }
            },
          });
        },
      },
    };
    const patchFailure = await callHandler(updateScheduleOperation, a, updatingThenTimingOut, { params: { id: schedule.id }, body: { every: '2h' } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String(patchFailure)).to.include('DEADLINE_EXCEEDED');
    expect((await describeInTemporal(schedule.id)).spec.intervals?.[0]?.every).to.equal(3_600_000, "Temporal's schedule is as the row still has it");
    expect((await get(schedule.id)).every).to.equal('1h');
  });

  it("answers 400 only for Temporal's refusal of a spec: another TypeError is no request's mistake", async () => {
    const failing = (err: Error) => ({ schedule: { create: async () => Promise.reject(err), getHandle: (id: string) => testPlatform().temporal.schedule.getHandle(id) } });
    const body = { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true };
    const bug = new TypeError("Cannot read properties of undefined (reading 'every')");
    const answer = await callHandler(createSchedule, a, failing(bug), { params: {}, body }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(answer).to.equal(bug, 'the TypeError goes on as it is (a 500), not as a 400');
    expect(isTemporalSpecRefusal(bug)).to.equal(false);

    // The real refusal, from the server: a time zone Node resolves but Temporal does not load.
    const refusal = await testPlatform()
      .temporal.schedule.create({
        scheduleId: `sch_refusal_probe_${Date.now()}`,
        spec: { intervals: [{ every: '1h' }], timezone: 'us/pacific' },
        action: { type: 'startWorkflow', workflowType: 'scheduledRun', taskQueue: 'nowhere', args: [] },
        state: { paused: true },
      })
      .then(
        async (handle) => {
          await handle.delete();
          return undefined;
        },
        (err: unknown) => err,
      );
    expect(isTemporalSpecRefusal(refusal), String(refusal)).to.equal(true);
    const refused = await callHandler(createSchedule, a, failing(refusal as Error), { params: {}, body }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.have.property('code', 'invalid_request');
  });

  it('a PATCH that keeps an agent with nothing published edits the rest; changing to such an agent is a 409', async () => {
    const kept = await publishAgent(a.key, 'unpublished-later', scriptedGraph([{ text: 'x' }]));
    const schedule = await create(a, { agent: 'unpublished-later', input: 'x', cron: '0 0 1 1 *', paused: true });
    // No operation takes a publication back; a row in that state stands for one.
    await withTenant(testPlatform().db, a.tenantId, (tx) =>
      tx.updateTable('agent_versions').set({ status: 'archived' }).where('agent_id', '=', kept).where('status', '=', 'published').execute(),
    );
    expect((await call('GET', `/v1/agents/${kept}`, { key: a.key })).body.agent.published_version).to.equal(null);
    const edit = await call('PATCH', `/v1/schedules/${schedule.id}`, { key: a.key, body: { description: 'still editable', input: 'y' } });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
    expect(edit.body.schedule).to.include({ description: 'still editable', input: 'y' });
    expect((await call('PATCH', `/v1/schedules/${schedule.id}`, { key: a.key, body: { agent: 'unpublished-later', input: 'z' } })).status).to.equal(200);

    const other = await create(a, { agent: 'ticker', input: 'x', cron: '0 0 1 1 *', paused: true });
    const moved = await call('PATCH', `/v1/schedules/${other.id}`, { key: a.key, body: { agent: 'unpublished-later' } });
    expect(moved.status).to.equal(409);
    expect(moved.body.error.code).to.equal('conflict');
    expect((await get(other.id)).agent_id).to.equal(agentId);
  });

  it('refuses overlap allow_all on a schedule that continues a thread, on create and on PATCH', async () => {
    const threadId = (await stream('POST', `/v1/agents/${agentId}/runs`, { key: a.key, body: { input: 'hi' } })).frames[0]!.data.thread_id;
    const fields = (response: { body: any }) => response.body.error.fields.map((f: { field: string }) => f.field);

    const both = await call('POST', '/v1/schedules', { key: a.key, body: { agent: 'ticker', input: 'x', every: '1h', paused: true, thread_id: threadId, overlap: 'allow_all' } });
    if (both.status === 201) made.push({ id: both.body.schedule.id, key: a.key });
    expect(both.status).to.equal(400);
    expect(fields(both)).to.include('body.overlap');

    const onThread = await create(a, { agent: 'ticker', input: 'x', every: '1h', paused: true, thread_id: threadId, overlap: 'buffer_one' });
    const toAllowAll = await call('PATCH', `/v1/schedules/${onThread.id}`, { key: a.key, body: { overlap: 'allow_all' } });
    expect(toAllowAll.status).to.equal(400);
    expect(fields(toAllowAll)).to.include('body.overlap');
    expect((await describeInTemporal(onThread.id)).policies.overlap).to.equal('BUFFER_ONE');

    const allowAll = await create(a, { agent: 'ticker', input: 'x', every: '1h', paused: true, overlap: 'allow_all' });
    const toThread = await call('PATCH', `/v1/schedules/${allowAll.id}`, { key: a.key, body: { thread_id: threadId } });
    expect(toThread.status).to.equal(400);
    expect(fields(toThread)).to.include('body.overlap');
    expect((await get(allowAll.id)).thread_id).to.equal(null);
    // Both at once, leaving the thread: fine.
    expect((await call('PATCH', `/v1/schedules/${onThread.id}`, { key: a.key, body: { overlap: 'allow_all', thread_id: null } })).status).to.equal(200);
  });
});
