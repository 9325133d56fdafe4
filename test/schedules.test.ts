import { ScheduleNotFoundError } from '@temporalio/client';
import { expect } from 'chai';
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

async function temporalScheduleIds(): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const schedule of testPlatform().temporal.schedule.list()) if (schedule.scheduleId.startsWith('sch_')) ids.add(schedule.scheduleId);
  return ids;
}

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
  const made: string[] = [];
  /** A schedule of an agent the agent-deletion test deletes, made first so its creation is seconds old by then. */
  let doomed: { agentId: string; scheduleId: string };

  async function create(tenant: TestTenant, body: Record<string, unknown>) {
    const response = await call('POST', '/v1/schedules', { key: tenant.key, body });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    made.push(response.body.schedule.id);
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
  });

  after(async () => {
    for (const id of made) {
      await call('DELETE', `/v1/schedules/${id}`, { key: a.key });
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
    const temporalBefore = await temporalScheduleIds();
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
      // Node resolves it (to America/Los_Angeles), the Temporal server does not: Temporal's refusal rolls the row back.
      [{ ...base, every: '1s', time_zone: 'us/pacific' }, 'body'],
      [{ ...base, every: '1s', agent: 'nobody' }, 'body.agent'],
      [{ ...base, every: '1s', thread_id: 'thr_nonexistent' }, 'body.thread_id'],
      [{ ...base, every: '1s', agent: 'echo', thread_id: otherAgentThread }, 'body.thread_id'],
      [{ ...base, every: '1s', agent: 'unpublished' }, '', 409],
    ];
    for (const [body, field, status = 400] of cases) {
      const response = await call('POST', '/v1/schedules', { key: a.key, body });
      expect(response.status, JSON.stringify(body)).to.equal(status);
      if (status === 400) {
        expect(response.body.error.code).to.equal('invalid_request');
        expect(response.body.error.fields.map((f: { field: string }) => f.field), JSON.stringify(response.body)).to.include(field);
      }
    }
    // The every pattern is in the document: refused by validation before the handler.
    expect((await call('POST', '/v1/schedules', { key: a.key, body: { ...base, every: '500ms' } })).status).to.equal(400);
    // Another workspace's agent is no agent here.
    expect((await call('POST', '/v1/schedules', { key: b.key, body: { ...base, every: '1s' } })).status).to.equal(400);

    expect(await listed()).to.equal(rowsBefore);
    // Temporal's list is eventually consistent: once a schedule made after the refusals shows, the refusals would have too.
    const marker = await create(a, { ...base, every: '1h', paused: true });
    const temporalAfter = await until('the marker schedule in Temporal\'s list', async () => {
      const ids = await temporalScheduleIds();
      return ids.has(marker.id) && ids;
    });
    expect([...temporalAfter].filter((id) => !temporalBefore.has(id))).to.deep.equal([marker.id]);
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

  it("deleting the agent deletes its schedules; the next firing deletes the Temporal Schedule", async () => {
    expect((await call('DELETE', `/v1/agents/${doomed.agentId}`, { key: a.key })).status).to.equal(200);
    expect((await call('GET', `/v1/schedules/${doomed.scheduleId}`, { key: a.key })).status).to.equal(404);
    // Paused, so nothing fires by itself: a trigger stands for the next firing.
    await testPlatform().temporal.schedule.getHandle(doomed.scheduleId).trigger();
    await until('the orphaned Temporal Schedule to be deleted', () => goneFromTemporal(doomed.scheduleId), 20_000);
  });
});
