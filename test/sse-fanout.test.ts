import { expect } from 'chai';
import { EventHub } from '../api/event-hub.js';
import { followLog } from '../api/log-feed.js';
import { runLog } from '../api/sse.js';
import { eventLogReads } from '../db/event-log.js';
import { appendRunEventsNow, type RunEventType } from '../db/run-events.js';
import { newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { recordRunningRun } from './support/recorded-run.js';
import { stream, type SseFrame, type SseResponse } from './support/sse.js';
import { until } from './support/until.js';

/**
 * The live streams' fan-out (api/log-feed.ts): every stream of a run in the API process shares one reader
 * of the run's log. Runs are recorded through the repository as running (so that the stranded-work sweep,
 * workers/stranded-work/, leaves them alone) and never started, and events are appended
 * with appendRunEventsNow (what the worker's activities write with), so each test decides exactly what
 * the log holds; the streams are real GET /v1/runs/{id}/events over HTTP.
 */
describe('live streams: one read per run, fanned out', () => {
  let tenant: TestTenant;
  let agentId: string;

  before(async () => {
    tenant = await newTenant('fanout');
    agentId = await publishAgent(tenant.key, 'fanout', scriptedGraph([{ text: 'never run' }]));
  });

  /** A running run whose log holds run.created (seq 1). */
  const liveRun = (t = tenant, agent = agentId) => recordRunningRun(testPlatform().db, { tenantId: t.tenantId, agentId: agent, input: 'x', source: 'api' });

  const append = (runId: string, type: RunEventType = 'message.delta', t = tenant) =>
    appendRunEventsNow(testPlatform().db, t.tenantId, runId, [{ type, data: type === 'message.delta' ? { delta: '.' } : {} }]);

  /** A stream of the run read until `run.completed` (or hung up by `until`); `seen` grows as frames arrive. */
  function follow(runId: string, options: { after?: number; lastEventId?: number; until?: (frame: SseFrame) => boolean } = {}) {
    const seen: number[] = [];
    const done = stream('GET', `/v1/runs/${runId}/events${options.after === undefined ? '' : `?after=${options.after}`}`, {
      key: tenant.key,
      headers: options.lastEventId === undefined ? {} : { 'last-event-id': String(options.lastEventId) },
      onFrame: (frame) => void seen.push(frame.id),
      until: options.until,
    });
    return { seen, done };
  }

  it('delivers every event once and in order to many subscribers of one run, with one log read per notification', async () => {
    const runId = await liveRun();
    const subscribers = Array.from({ length: 8 }, () => follow(runId));
    await until(() => subscribers.every((s) => s.seen.length === 1));
    const readsBefore = eventLogReads.run_events;
    const appended = 10;
    for (let i = 0; i < appended; i++) {
      await append(runId);
      await until(() => subscribers.every((s) => s.seen.length === i + 2));
    }
    const reads = eventLogReads.run_events - readsBefore;
    await append(runId, 'run.completed');
    const streams = await Promise.all(subscribers.map((s) => s.done));
    for (const response of streams) expect(ids(response)).to.deep.equal(range(1, appended + 2));
    // One read per notification whatever the number of subscribers, plus a few polls (a look each
    // second without news; an empty one when a poll found the event first). Each subscriber reading
    // for itself took 8 per event, and more.
    expect(reads).to.be.at.least(appended).and.at.most(appended + 4);
  });

  it('gives a subscriber that joins behind the others its backlog once, then the live events without a gap', async () => {
    const runId = await liveRun();
    for (let i = 0; i < 5; i++) await append(runId); // seq 2..6
    const first = follow(runId);
    await until(() => first.seen.length === 6);
    // Events keep coming while two more join further back, by `after` and by Last-Event-ID.
    const writing = (async () => {
      for (let i = 0; i < 30; i++) await append(runId); // seq 7..36
    })();
    const byQuery = follow(runId, { after: 3 });
    await until(() => first.seen.length >= 12);
    const byHeader = follow(runId, { lastEventId: 2 });
    await writing;
    await append(runId, 'run.completed'); // seq 37
    const [a, b, c] = await Promise.all([first.done, byQuery.done, byHeader.done]);
    expect(ids(a)).to.deep.equal(range(1, 37));
    expect(ids(b)).to.deep.equal(range(4, 37));
    expect(ids(c)).to.deep.equal(range(3, 37));
  });

  it('goes on for the others when one subscriber hangs up', async () => {
    const runId = await liveRun();
    const leaving = follow(runId, { until: (frame) => frame.id === 3 });
    const staying = [follow(runId), follow(runId)];
    await until(() => staying.every((s) => s.seen.length === 1) && leaving.seen.length === 1);
    for (let i = 0; i < 6; i++) {
      await append(runId);
      await until(() => staying.every((s) => s.seen.length === i + 2));
    }
    expect(ids(await leaving.done)).to.deep.equal([1, 2, 3]);
    await append(runId, 'run.completed');
    for (const response of await Promise.all(staying.map((s) => s.done))) expect(ids(response)).to.deep.equal(range(1, 8));
  });

  it("shares a reader per tenant and run: a follower under another tenant never gets the run's events", async () => {
    const other = await newTenant('fanout-other');
    const runId = await liveRun();
    // A hub without notifications: the feeds find events by their poll, the subject here is the key.
    const hub = await EventHub.start({ listen: async () => async () => {} }, 'unused');
    const deps = { db: testPlatform().db, events: hub };
    const owner: number[] = [];
    const stranger: number[] = [];
    let strangerEnded = false;
    const own = followLog(runLog(deps, tenant.tenantId, runId), 0, () => owner.push(...own.take().map((e) => e.seq)));
    const foreign = followLog(runLog(deps, other.tenantId, runId), 0, () => {
      stranger.push(...foreign.take().map((e) => e.seq));
      strangerEnded = foreign.ended;
    });
    try {
      await append(runId);
      await until(() => owner.length === 2 && strangerEnded);
      // The other tenant's row-level security hides the run: its feed reads nothing and ends (no such run).
      expect(owner).to.deep.equal([1, 2]);
      expect(stranger).to.deep.equal([]);
    } finally {
      own.cancel();
      foreign.cancel();
    }
  });
});

function ids(response: SseResponse): number[] {
  expect(response.status).to.equal(200);
  return response.frames.map((frame) => frame.id);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
