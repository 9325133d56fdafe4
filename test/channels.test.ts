import { expect } from 'chai';
import { sql } from 'kysely';
import { signMessage } from '../activities/standard-webhooks/signature.js';
import { queueChannelRun } from '../api/channels/channel-runs.js';
import { recordChannelMessage } from '../db/channel-messages.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { createChannel, sendSigned, settledRun, standardWebhooksSignature } from './support/channels.js';
import { testPlatform } from './support/global.js';

describe('channels: inbound webhook messages', function () {
  this.timeout(60_000);
  let a: TestTenant;
  let b: TestTenant;
  let agentId: string;
  let channel: { id: string; secret: string };

  before(async () => {
    a = await newTenant('chan-a');
    b = await newTenant('chan-b');
    agentId = await publishAgent(a.key, 'greeter', scriptedGraph([{ text: 'Hello from the greeter.' }]));
    channel = await createChannel(a.key, { kind: 'webhook', agent: 'greeter', description: 'support inbox' });
  });

  it('creates a channel with a whsec_ secret shown once, sealed at rest, and manages it with a management key', async () => {
    expect(channel.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await call('GET', `/v1/channels/${channel.id}`, { key: a.standardKey });
    expect(got.status).to.equal(200);
    expect(got.body.channel).to.include({ id: channel.id, kind: 'webhook', agent_id: agentId, description: 'support inbox' });
    expect(got.body.channel.url).to.match(new RegExp(`^https?://[^/]+(/.*)?/v1/channels/${channel.id}/messages$`));
    expect(JSON.stringify(got.body)).not.to.include(channel.secret.slice(6));

    const row = await testPlatform().db.selectFrom('channels').select('secret').where('id', '=', channel.id).executeTakeFirstOrThrow();
    expect(row.secret).not.to.include(channel.secret.slice(6));
    expect(row.secret.split('.')).to.have.length(5); // a JWE

    expect((await call('POST', '/v1/channels', { key: a.standardKey, body: { kind: 'webhook', agent: 'greeter' } })).status).to.equal(403);
    expect((await call('PATCH', `/v1/channels/${channel.id}`, { key: a.standardKey, body: { description: 'x' } })).status).to.equal(403);
    const unknownAgent = await call('POST', '/v1/channels', { key: a.key, body: { kind: 'webhook', agent: 'nobody' } });
    expect(unknownAgent.status).to.equal(400);
    expect(unknownAgent.body.error.fields[0].field).to.equal('body.agent');

    const listed = await call('GET', '/v1/channels?agent=greeter', { key: a.key });
    expect(listed.body.channels.map((c: { id: string }) => c.id)).to.include(channel.id);
    expect((await call('GET', '/v1/channels?agent=nobody', { key: a.key })).body.channels).to.deep.equal([]);
    const patched = await call('PATCH', `/v1/channels/${channel.id}`, { key: a.key, body: { description: 'front desk' } });
    expect(patched.status).to.equal(200);
    expect(patched.body.channel.description).to.equal('front desk');
  });

  it('starts a run from a signed message: 202 with the run, which completes with source "channel" and the channel id', async () => {
    const sent = await sendSigned(channel.id, channel.secret, { sender: 'user-1', text: 'Hi there' });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    expect(sent.body.replayed).to.equal(false);
    expect(sent.headers.get('ratelimit-policy')).to.equal('60;w=60');
    const run = await settledRun(a.key, sent.body.run_id);
    expect(run).to.include({ status: 'completed', source: 'channel', channel_id: channel.id, agent_id: agentId, input: 'Hi there', output: 'Hello from the greeter.', thread_id: sent.body.thread_id });
    const bySource = await call('GET', '/v1/runs?source=channel', { key: a.key });
    expect(bySource.body.runs.map((r: { id: string }) => r.id)).to.include(sent.body.run_id);
  });

  it("continues a sender's thread with each of its messages, and gives another sender a thread of its own", async () => {
    const first = await sendSigned(channel.id, channel.secret, { sender: 'alice@example.com', text: 'first' });
    await settledRun(a.key, first.body.run_id);
    const second = await sendSigned(channel.id, channel.secret, { sender: 'alice@example.com', text: 'second' });
    const other = await sendSigned(channel.id, channel.secret, { sender: 'bob@example.com', text: 'hello' });
    expect(second.body.thread_id).to.equal(first.body.thread_id);
    expect(other.body.thread_id).not.to.equal(first.body.thread_id);
    await settledRun(a.key, second.body.run_id);
    await settledRun(a.key, other.body.run_id);
    const thread = await call('GET', `/v1/threads/${first.body.thread_id}?agent=${agentId}`, { key: a.key });
    expect(thread.status, JSON.stringify(thread.body)).to.equal(200);
    expect(thread.body.turns.map((t: { input: string }) => t.input)).to.deep.equal(['first', 'second']);
  });

  it('ignores a replayed message id: the same run answers and nothing new starts', async () => {
    const first = await sendSigned(channel.id, channel.secret, { sender: 'replayer', text: 'once only' });
    expect(first.status).to.equal(202);
    const replay = await sendSigned(channel.id, channel.secret, { sender: 'replayer', text: 'once only' }, { id: first.id });
    expect(replay.status).to.equal(202);
    expect(replay.body).to.deep.equal({ run_id: first.body.run_id, thread_id: first.body.thread_id, replayed: true });
    // Even another body under the same id (a sender's retry that changed it) starts nothing.
    const changed = await sendSigned(channel.id, channel.secret, { sender: 'replayer', text: 'twice?' }, { id: first.id });
    expect(changed.body.run_id).to.equal(first.body.run_id);
    await settledRun(a.key, first.body.run_id);
    const count = await testPlatform().db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('thread_id', '=', first.body.thread_id).executeTakeFirstOrThrow();
    expect(Number(count.n)).to.equal(1);
  });

  it('answers two deliveries of one message arriving together with the same run, 202 both', async () => {
    const body = { sender: 'twice-at-once', text: 'both at once' };
    const id = `msg_together_${Date.now()}`;
    const [one, two] = await Promise.all([sendSigned(channel.id, channel.secret, body, { id }), sendSigned(channel.id, channel.secret, body, { id })]);
    expect(one.status, JSON.stringify(one.body)).to.equal(202);
    expect(two.status, JSON.stringify(two.body)).to.equal(202);
    expect(two.body.run_id).to.equal(one.body.run_id);
    expect([one.body.replayed, two.body.replayed].sort()).to.deep.equal([false, true]);
    expect((await settledRun(a.key, one.body.run_id)).status).to.equal('completed');
    const count = await testPlatform().db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('thread_id', '=', one.body.thread_id).executeTakeFirstOrThrow();
    expect(Number(count.n)).to.equal(1);
  });

  it('keeps a message id 3 days: a retry a day later (fresh timestamp) is a replay, one after 3 days a new message', async () => {
    const first = await sendSigned(channel.id, channel.secret, { sender: 'slow-retrier', text: 'kept' });
    expect(first.status).to.equal(202);
    await settledRun(a.key, first.body.run_id);
    const age = (hours: number) =>
      sql`update channel_messages set received_at = now() - make_interval(hours => ${hours}) where channel_id = ${channel.id} and message_id = ${first.id}`.execute(testPlatform().db);
    await age(30);
    const dayLater = await sendSigned(channel.id, channel.secret, { sender: 'slow-retrier', text: 'kept' }, { id: first.id });
    expect(dayLater.body).to.deep.equal({ run_id: first.body.run_id, thread_id: first.body.thread_id, replayed: true });
    await age(73);
    const expired = await sendSigned(channel.id, channel.secret, { sender: 'slow-retrier', text: 'kept' }, { id: first.id });
    expect(expired.status).to.equal(202);
    expect(expired.body.replayed).to.equal(false);
    expect(expired.body.run_id).not.to.equal(first.body.run_id);
    await settledRun(a.key, expired.body.run_id);
  });

  it('starts, on a replay, the run a first delivery recorded but did not get to start', async () => {
    // As a delivery that crashed between its commit and the workflow's start leaves it.
    const messageId = `msg_crashed_${Date.now()}`;
    const queued = await withTenant(testPlatform().db, a.tenantId, async (tx) => {
      const run = await queueChannelRun(tx, { tenantId: a.tenantId, agentId, channelId: channel.id, input: 'lost start', threadId: undefined });
      await recordChannelMessage(tx, a.tenantId, channel.id, messageId, { runId: run.runId, callId: null });
      return run;
    });
    expect((await call('GET', `/v1/runs/${queued.runId}`, { key: a.key })).body.run.status).to.equal('queued');
    const retry = await sendSigned(channel.id, channel.secret, { sender: 'crash', text: 'lost start' }, { id: messageId });
    expect(retry.body).to.deep.equal({ run_id: queued.runId, thread_id: queued.threadId, replayed: true });
    expect((await settledRun(a.key, queued.runId)).status).to.equal('completed');
    // A second retry finds it started and leaves it be.
    expect((await sendSigned(channel.id, channel.secret, { sender: 'crash', text: 'lost start' }, { id: messageId })).status).to.equal(202);
  });

  it('refuses a forged signature, a stale or future timestamp, missing headers and an unknown channel alike with 401', async () => {
    const before = await runCount();
    const forged = await sendSigned(channel.id, channel.secret, { sender: 'mallory', text: 'forged' }, { signWith: 'whsec_' + Buffer.alloc(32, 7).toString('base64') });
    expect(forged.status).to.equal(401);
    const stale = await sendSigned(channel.id, channel.secret, { sender: 'mallory', text: 'old' }, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(stale.status).to.equal(401);
    expect(stale.body.error.message).to.include('webhook-timestamp');
    const future = await sendSigned(channel.id, channel.secret, { sender: 'mallory', text: 'new' }, { timestamp: Math.floor(Date.now() / 1000) + 6 * 60 });
    expect(future.status).to.equal(401);
    // Within the tolerance it passes.
    const late = await sendSigned(channel.id, channel.secret, { sender: 'late', text: 'a bit late' }, { timestamp: Math.floor(Date.now() / 1000) - 4 * 60 });
    expect(late.status).to.equal(202);

    const unsigned = await call('POST', `/v1/channels/${channel.id}/messages`, { body: { sender: 'x', text: 'y' } });
    expect(unsigned.status).to.equal(401);
    const unknown = await sendSigned('chn_01JD2X5J8Z3M9Q0W4E7R6T5Y1U', channel.secret, { sender: 'mallory', text: 'probe' });
    expect(unknown.status).to.equal(401);
    expect(unknown.body).to.deep.equal(forged.body);
    // A bearer key is no way in either.
    const withKey = await call('POST', `/v1/channels/${channel.id}/messages`, { key: a.key, body: { sender: 'x', text: 'y' } });
    expect(withKey.status).to.equal(401);
    expect(await runCount()).to.equal(before + 1);
  });

  it('answers 400 to a signed body that is not JSON or not a message, and starts nothing', async () => {
    const before = await runCount();
    const garbage = await sendSigned(channel.id, channel.secret, undefined, { rawBody: '{not json' });
    expect(garbage.status).to.equal(400);
    const wrong = await sendSigned(channel.id, channel.secret, { sender: 'x', text: '', extra: 1 });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error.fields.map((f: { field: string }) => f.field)).to.include.members(['body.text', 'body.extra']);
    const voiceEvent = await sendSigned(channel.id, channel.secret, { type: 'call.turn', call_id: 'c', direction: 'inbound', from: '+1', to: '+2', turn: { text: 'hi' } });
    expect(voiceEvent.status).to.equal(400);
    // Nested deeper than any JSON body the API takes (api/middleware/json-body.ts).
    const deep = await sendSigned(channel.id, channel.secret, undefined, { rawBody: `{"sender":"x","text":${'['.repeat(100)}${']'.repeat(100)}}` });
    expect(deep.status, JSON.stringify(deep.body)).to.equal(400);
    expect(deep.body.error.message).to.include('nests deeper');
    expect(await runCount()).to.equal(before);
  });

  it('rotates the secret: the old one stops verifying, the new one (shown once) does', async () => {
    const rotated = await call('POST', `/v1/channels/${channel.id}/rotate-secret`, { key: a.key });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.to.equal(channel.secret);
    expect((await sendSigned(channel.id, channel.secret, { sender: 'u', text: 'old secret' })).status).to.equal(401);
    const fresh = await sendSigned(channel.id, rotated.body.secret, { sender: 'u', text: 'new secret' });
    expect(fresh.status).to.equal(202);
    channel.secret = rotated.body.secret;

    // A secret of the caller's own, given with PATCH.
    const own = 'whsec_' + Buffer.alloc(24, 3).toString('base64');
    expect((await call('PATCH', `/v1/channels/${channel.id}`, { key: a.key, body: { secret: own } })).status).to.equal(200);
    expect((await sendSigned(channel.id, own, { sender: 'u', text: 'own secret' })).status).to.equal(202);
    expect((await sendSigned(channel.id, channel.secret, { sender: 'u', text: 'rotated secret' })).status).to.equal(401);
    channel.secret = own;
    expect((await call('PATCH', `/v1/channels/${channel.id}`, { key: a.key, body: { secret: 'whsec_short' } })).status).to.equal(400);

    // Or with rotate-secret, as webhooks take it: shown back once like a generated one.
    const given = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect((await call('POST', `/v1/channels/${channel.id}/rotate-secret`, { key: a.key, body: { secret: 'whsec_short' } })).status).to.equal(400);
    expect((await sendSigned(channel.id, own, { sender: 'u', text: 'still the own secret' })).status, 'a refused rotation changes nothing').to.equal(202);
    const rotatedToGiven = await call('POST', `/v1/channels/${channel.id}/rotate-secret`, { key: a.key, body: { secret: given } });
    expect(rotatedToGiven.status).to.equal(200);
    expect(rotatedToGiven.body.secret).to.equal(given);
    expect((await sendSigned(channel.id, given, { sender: 'u', text: 'given secret' })).status).to.equal(202);
    expect((await sendSigned(channel.id, own, { sender: 'u', text: 'own secret again' })).status).to.equal(401);
    channel.secret = given;
  });

  it("is invisible to another workspace (404), whose key cannot change or delete it", async () => {
    expect((await call('GET', `/v1/channels/${channel.id}`, { key: b.key })).status).to.equal(404);
    expect((await call('PATCH', `/v1/channels/${channel.id}`, { key: b.key, body: { description: 'mine' } })).status).to.equal(404);
    expect((await call('POST', `/v1/channels/${channel.id}/rotate-secret`, { key: b.key })).status).to.equal(404);
    expect((await call('DELETE', `/v1/channels/${channel.id}`, { key: b.key })).status).to.equal(404);
    expect((await call('GET', '/v1/channels', { key: b.key })).body.channels).to.deep.equal([]);
    // b's agent cannot be named by a's channel either.
    await publishAgent(b.key, 'b-agent', scriptedGraph([{ text: 'b' }]));
    expect((await call('PATCH', `/v1/channels/${channel.id}`, { key: a.key, body: { agent: 'b-agent' } })).status).to.equal(400);
  });

  it('runs into the rate limit per channel, as run starts per key do', async () => {
    const limited = await createChannel(a.key, { kind: 'webhook', agent: agentId });
    // Fill the window of this channel's key directly (59 earlier hits), then two more messages.
    await testPlatform().db.insertInto('rate_limit_hits').values(Array.from({ length: 59 }, () => ({ tenant_id: a.tenantId, key_id: limited.id, bucket: 'runs' }))).execute();
    const last = await sendSigned(limited.id, limited.secret, { sender: 's', text: 'sixtieth' });
    expect(last.status).to.equal(202);
    expect(last.headers.get('ratelimit-remaining')).to.equal('0');
    const refused = await sendSigned(limited.id, limited.secret, { sender: 's', text: 'sixty-first' });
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    // A replay starts nothing, so the limit does not stop it from answering.
    const replay = await sendSigned(limited.id, limited.secret, { sender: 's', text: 'sixtieth' }, { id: last.id });
    expect(replay.status).to.equal(202);
    expect(replay.body).to.include({ run_id: last.body.run_id, replayed: true });
    // Another channel of the workspace is not limited by it.
    expect((await sendSigned(channel.id, channel.secret, { sender: 's', text: 'other channel' })).status).to.equal(202);
  });

  it('deletes a channel: its address then answers as an unknown one, and its runs stay', async () => {
    const doomed = await createChannel(a.key, { kind: 'webhook', agent: 'greeter' });
    const sent = await sendSigned(doomed.id, doomed.secret, { sender: 'u', text: 'before delete' });
    await settledRun(a.key, sent.body.run_id);
    expect((await call('DELETE', `/v1/channels/${doomed.id}`, { key: a.key })).body).to.deep.equal({ deleted: true, id: doomed.id });
    expect((await call('GET', `/v1/channels/${doomed.id}`, { key: a.key })).status).to.equal(404);
    expect((await sendSigned(doomed.id, doomed.secret, { sender: 'u', text: 'after delete' })).status).to.equal(401);
    expect((await call('GET', `/v1/runs/${sent.body.run_id}`, { key: a.key })).body.run.channel_id).to.equal(doomed.id);
  });

  it('signs as the Standard Webhooks reference does (its published test vector)', () => {
    // From the specification's libraries' tests: this secret, id, timestamp and payload give this signature.
    const signature = standardWebhooksSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // The platform's own signing agrees, and takes nothing but a whsec_ secret.
    expect(signMessage('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).to.equal(signature);
    expect(() => signMessage('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{}')).to.throw(/whsec_/);
  });

  async function runCount(): Promise<number> {
    const row = await testPlatform().db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', a.tenantId).executeTakeFirstOrThrow();
    return Number(row.n);
  }
});
