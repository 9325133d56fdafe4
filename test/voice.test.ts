import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { expect } from 'chai';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { createChannel, sendSigned, settledRun } from './support/channels.js';
import { VOICE_REPLY_WAIT_MS } from '../api/channels/voice-kind.js';
import { runWhenSettled } from '../api/channels/run-settled.js';
import type { AppDeps } from '../api/deps.js';
import { testPlatform } from './support/global.js';

/** USD per million tokens of the `scripted` model (activities/models/prices.ts), and the usage each reply reports. */
const PRICE = { prompt: '1.25', completion: '2.5' };
const USAGE = { prompt_tokens: 1000, completion_tokens: 200 };

describe('voice: calls through a voice channel', function () {
  this.timeout(60_000);
  let a: TestTenant;
  let b: TestTenant;
  let agentId: string;
  let otherAgentId: string;
  let voice: { id: string; secret: string };
  const callId = `CA${randomUUID().replace(/-/g, '')}`;
  const parties = { call_id: callId, direction: 'inbound', from: '+14155550100', to: '+14155550199' };
  let recordId: string;
  let firstTurn: { id: string; runId: string };

  const turn = (text: string, extra: Record<string, unknown> = {}) => ({ type: 'call.turn', ...parties, turn: { text, ...extra } });

  before(async () => {
    a = await newTenant('voice-a');
    b = await newTenant('voice-b');
    agentId = await publishAgent(a.key, 'receptionist', scriptedGraph([{ text: 'Thanks for calling, how can I help?', usage: USAGE }]));
    otherAgentId = await publishAgent(a.key, 'other', scriptedGraph([{ text: 'other' }]));
    voice = await createChannel(a.key, { kind: 'voice', agent: 'receptionist' });
  });

  it("answers each caller turn with the agent's reply, as runs continuing the call's thread", async () => {
    const first = await sendSigned(voice.id, voice.secret, turn('Hello, is anyone there?', { confidence: 0.93 }));
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.include({ status: 'completed', reply: 'Thanks for calling, how can I help?', replayed: false });
    recordId = first.body.call_id;
    firstTurn = { id: first.id, runId: first.body.run_id };

    const second = await sendSigned(voice.id, voice.secret, turn('I would like to book a table.'));
    expect(second.body).to.include({ call_id: recordId, status: 'completed', reply: 'Thanks for calling, how can I help?' });
    expect(second.body.run_id).not.to.equal(first.body.run_id);

    const [run1, run2] = await Promise.all([first.body.run_id, second.body.run_id].map(async (id) => (await call('GET', `/v1/runs/${id}`, { key: a.key })).body.run));
    expect(run1).to.include({ source: 'channel', channel_id: voice.id, input: 'Hello, is anyone there?' });
    expect(run2.thread_id).to.equal(run1.thread_id);

    const ended = await sendSigned(voice.id, voice.secret, { type: 'call.ended', ...parties, duration_seconds: 42 });
    expect(ended.status).to.equal(200);
    expect(ended.body).to.deep.equal({ call_id: recordId, run_id: null, status: 'ended', reply: null, replayed: false });
  });

  it('keeps the call record: direction, parties, duration, the transcript as turns, its runs, and the exact sum of their usage and cost', async () => {
    const got = await call('GET', `/v1/voice/calls/${recordId}`, { key: a.standardKey });
    expect(got.status).to.equal(200);
    const record = got.body.call;
    expect(record).to.include({ id: recordId, agent_id: agentId, channel_id: voice.id, provider_call_id: callId, direction: 'inbound', from: '+14155550100', to: '+14155550199', duration_seconds: 42 });
    expect(record.ended_at).to.be.a('string');
    expect(new Date(record.ended_at).getTime()).to.be.at.least(new Date(record.started_at).getTime());
    expect(record.turns.map((t: { role: string; text: string }) => [t.role, t.text])).to.deep.equal([
      ['caller', 'Hello, is anyone there?'],
      ['agent', 'Thanks for calling, how can I help?'],
      ['caller', 'I would like to book a table.'],
      ['agent', 'Thanks for calling, how can I help?'],
    ]);
    expect(record.turns[0].confidence).to.equal(0.93);
    expect(record.turns[0].run_id).to.equal(record.turns[1].run_id);
    expect(record.runs).to.have.length(2);
    expect(record.runs.map((r: { id: string }) => r.id)).to.deep.equal([record.turns[0].run_id, record.turns[2].run_id]);
    expect(record.runs.every((r: { status: string }) => r.status === 'completed')).to.equal(true);

    // Each run: 1000 prompt tokens at 1.25 and 200 completion tokens at 2.5 per million.
    const perRun = new Decimal(USAGE.prompt_tokens).times(PRICE.prompt).plus(new Decimal(USAGE.completion_tokens).times(PRICE.completion)).dividedBy(1_000_000);
    for (const r of record.runs) expect(r.usage.cost_usd).to.equal(perRun.toFixed());
    expect(record.usage).to.deep.equal({
      prompt_tokens: 2 * USAGE.prompt_tokens,
      completion_tokens: 2 * USAGE.completion_tokens,
      total_tokens: 2 * (USAGE.prompt_tokens + USAGE.completion_tokens),
      cost_usd: perRun.times(2).toFixed(),
    });
    expect(record.usage.cost_usd).to.equal('0.0035');
  });

  it('ignores a replayed turn: the first delivery\'s run and reply answer, and the transcript keeps one turn', async () => {
    const replay = await sendSigned(voice.id, voice.secret, turn('Hello, is anyone there?', { confidence: 0.93 }), { id: firstTurn.id });
    expect(replay.status).to.equal(200);
    expect(replay.body).to.deep.equal({ call_id: recordId, run_id: firstTurn.runId, status: 'completed', reply: 'Thanks for calling, how can I help?', replayed: true });
    const record = (await call('GET', `/v1/voice/calls/${recordId}`, { key: a.key })).body.call;
    expect(record.turns.filter((t: { role: string }) => t.role === 'caller')).to.have.length(2);
  });

  it('answers two deliveries of one turn arriving together with the same run and reply', async () => {
    await publishAgent(a.key, 'twice', scriptedGraph([{ text: 'Heard you once.' }]));
    const line = await createChannel(a.key, { kind: 'voice', agent: 'twice' });
    const event = { type: 'call.turn', ...parties, call_id: `CA-together-${randomUUID()}`, turn: { text: 'Said once, sent twice' } };
    const id = `msg_${randomUUID()}`;
    const [one, two] = await Promise.all([sendSigned(line.id, line.secret, event, { id }), sendSigned(line.id, line.secret, event, { id })]);
    expect(one.status, JSON.stringify(one.body)).to.equal(200);
    expect(two.status, JSON.stringify(two.body)).to.equal(200);
    expect(two.body.run_id).to.equal(one.body.run_id);
    expect(one.body).to.include({ status: 'completed', reply: 'Heard you once.' });
    expect(two.body).to.include({ status: 'completed', reply: 'Heard you once.' });
    expect([one.body.replayed, two.body.replayed].sort()).to.deep.equal([false, true]);
    const record = (await call('GET', `/v1/voice/calls/${one.body.call_id}`, { key: a.key })).body.call;
    expect(record.turns.filter((t: { role: string }) => t.role === 'caller')).to.have.length(1);
  });

  it('refuses a turn of an ended call (409) and a forged or stale event (401)', async () => {
    expect((await sendSigned(voice.id, voice.secret, turn('Still there?'))).status).to.equal(409);
    const forged = await sendSigned(voice.id, voice.secret, turn('forged'), { signWith: 'whsec_' + Buffer.alloc(32, 1).toString('base64') });
    expect(forged.status).to.equal(401);
    const stale = await sendSigned(voice.id, voice.secret, turn('stale'), { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(stale.status).to.equal(401);
    const message = await sendSigned(voice.id, voice.secret, { sender: 'x', text: 'a webhook message' });
    expect(message.status).to.equal(400);
    const noType = await sendSigned(voice.id, voice.secret, { ...parties, turn: { text: 'x' } });
    expect(noType.status).to.equal(400);
  });

  it('answers `paused` with no reply when the run waits for a question to be answered', async () => {
    const askHuman = await createBuiltinTool(a.key, 'ask_human');
    await publishAgent(a.key, 'asker', scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Transfer this caller?' } }] }, { text: 'Transferring you now.' }], [askHuman]));
    const paused = await createChannel(a.key, { kind: 'voice', agent: 'asker' });
    const response = await sendSigned(paused.id, paused.secret, { type: 'call.turn', call_id: 'CA-paused', direction: 'outbound', from: '+1555', to: '+1666', turn: { text: 'I need a person' } });
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ status: 'paused', reply: null });
    const record = (await call('GET', `/v1/voice/calls/${response.body.call_id}`, { key: a.key })).body.call;
    expect(record).to.include({ direction: 'outbound', ended_at: null, duration_seconds: null });
    expect(record.turns).to.have.length(1);
    expect(record.usage.cost_usd, 'a run still going has no final cost').to.equal(null);
    await call('POST', `/v1/runs/${response.body.run_id}/cancel`, { key: a.key });
  });

  it('answers `pending` with no reply when the run outlasts the wait, and its reply joins the transcript when it ends', async function () {
    this.timeout(40_000);
    await publishAgent(a.key, 'slow', scriptedGraph([{ text: 'Sorry for the wait.', delay_ms: VOICE_REPLY_WAIT_MS + 2_000 }]));
    const slow = await createChannel(a.key, { kind: 'voice', agent: 'slow' });
    const started = Date.now();
    const response = await sendSigned(slow.id, slow.secret, { type: 'call.turn', call_id: 'CA-slow', direction: 'inbound', from: '+1999', to: '+1000', turn: { text: 'Are you there?' } });
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ status: 'pending', reply: null });
    expect(Date.now() - started).to.be.within(VOICE_REPLY_WAIT_MS - 100, VOICE_REPLY_WAIT_MS + 1_900);

    // A caller who hangs up ends the wait at once; a run that is not there ends it with nothing.
    const deps = { db: testPlatform().db, events: { subscribe: () => () => undefined } } as unknown as AppDeps;
    const hangUp = new AbortController();
    setTimeout(() => hangUp.abort(), 300);
    const waitStarted = Date.now();
    const stillRunning = await runWhenSettled(deps, a.tenantId, response.body.run_id, 20_000, hangUp.signal);
    expect(stillRunning?.status).to.equal('running');
    expect(Date.now() - waitStarted).to.be.below(1_000);
    expect(await runWhenSettled(deps, a.tenantId, 'run_01JD2X5J8Z3M9Q0W4E7R6T5Y1U', 20_000)).to.equal(undefined);

    const run = await settledRun(a.key, response.body.run_id);
    expect(run.status).to.equal('completed');
    const record = (await call('GET', `/v1/voice/calls/${response.body.call_id}`, { key: a.key })).body.call;
    expect(record.turns.map((t: { role: string; text: string }) => [t.role, t.text])).to.deep.equal([
      ['caller', 'Are you there?'],
      ['agent', 'Sorry for the wait.'],
    ]);
  });

  it('lists calls newest first, filtered by agent and start time, a page at a time', async () => {
    const other = await createChannel(a.key, { kind: 'voice', agent: 'other' });
    const otherCall = await sendSigned(other.id, other.secret, { type: 'call.ended', call_id: 'CA-missed', direction: 'inbound', from: '+1777', to: '+1888', duration_seconds: 0 });
    expect(otherCall.status).to.equal(200);

    const all = await call('GET', '/v1/voice/calls', { key: a.key });
    expect(all.status).to.equal(200);
    const ids = all.body.calls.map((c: { id: string }) => c.id);
    expect(ids).to.include.members([recordId, otherCall.body.call_id]);
    expect([...ids].sort().reverse()).to.deep.equal(ids);

    const mine = await call('GET', '/v1/voice/calls?agent=receptionist', { key: a.key });
    expect(mine.body.calls.map((c: { id: string }) => c.id)).to.deep.equal([recordId]);
    const theirs = await call('GET', `/v1/voice/calls?agent=${otherAgentId}`, { key: a.key });
    expect(theirs.body.calls.map((c: { id: string }) => c.id)).to.deep.equal([otherCall.body.call_id]);
    expect((await call('GET', '/v1/voice/calls?agent=nobody', { key: a.key })).body.calls).to.deep.equal([]);

    const started = new Date((await call('GET', `/v1/voice/calls/${otherCall.body.call_id}`, { key: a.key })).body.call.started_at);
    const after = await call('GET', `/v1/voice/calls?started_after=${encodeURIComponent(started.toISOString())}`, { key: a.key });
    expect(after.body.calls.map((c: { id: string }) => c.id)).to.deep.equal([otherCall.body.call_id]);
    const before = await call('GET', `/v1/voice/calls?started_before=${encodeURIComponent(started.toISOString())}`, { key: a.key });
    expect(before.body.calls.map((c: { id: string }) => c.id)).to.include(recordId).and.not.to.include(otherCall.body.call_id);
    expect((await call('GET', '/v1/voice/calls?started_after=yesterday', { key: a.key })).status).to.equal(400);
    // RFC 3339 allows a leap second; JavaScript's Date does not hold one, so it is refused, not a 500.
    const leap = await call('GET', `/v1/voice/calls?started_after=${encodeURIComponent('2016-12-31T23:59:60Z')}`, { key: a.key });
    expect(leap.status).to.equal(400);
    expect(leap.body.error.fields).to.deep.include({ field: 'query.started_after', message: 'must match format "date-time"' });

    const firstPage = await call('GET', '/v1/voice/calls?limit=1', { key: a.key });
    expect(firstPage.body.calls).to.have.length(1);
    const secondPage = await call('GET', `/v1/voice/calls?limit=1&cursor=${firstPage.body.next_cursor}`, { key: a.key });
    expect(secondPage.body.calls[0].id < firstPage.body.calls[0].id).to.equal(true);
  });

  it('is invisible to another workspace: 404 for the call, an empty list', async () => {
    expect((await call('GET', `/v1/voice/calls/${recordId}`, { key: b.key })).status).to.equal(404);
    expect((await call('GET', '/v1/voice/calls', { key: b.key })).body.calls).to.deep.equal([]);
    expect((await call('GET', `/v1/channels/${voice.id}`, { key: b.key })).status).to.equal(404);
  });
});
