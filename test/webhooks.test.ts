import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { sql } from 'kysely';
import { attemptWebhookDelivery } from '../activities/webhooks/attempt.js';
import { emitAfterBookkeeping, EMISSION_TRIES } from '../activities/webhooks/bookkeeping-emission.js';
import { giveUpWebhookDelivery } from '../activities/webhooks/give-up.js';
import { webhookPayload } from '../activities/webhooks/events.js';
import { emitRunEnded } from '../activities/webhooks/platform-events.js';
import { withTenant } from '../db/tenant-transaction.js';
import { insertDeliveries, storeWebhookEvent, WEBHOOK_EVENTS_KEPT_FOR_DAYS } from '../db/webhook-deliveries.js';
import { deliverWebhookWorkflowId } from '../workflows/deliver-webhook-api.js';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { addCases, createSuite, finishedExperiment, startExperiment } from './support/evals.js';
import { ALLOWED_TOOL_HOST, testPlatform, testWorkerPool } from './support/global.js';
import { stream } from './support/sse.js';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A local endpoint on the address tests may reach. `/ok` answers 200; `/flaky/<key>` answers 500 twice
 * for each key, then 200; `/fail` always 500; `/gone` 410; `/big` 200 with a 2 MiB body (Content-Length set).
 */
class Receiver {
  readonly received: Received[] = [];
  private readonly failures = new Map<string, number>();
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      let status = 200;
      if (path.startsWith('/flaky/')) {
        const seen = this.failures.get(path) ?? 0;
        this.failures.set(path, seen + 1);
        status = seen < 2 ? 500 : 200;
      } else if (path.startsWith('/fail')) status = 500;
      else if (path.startsWith('/gone')) status = 410;
      else if (path.startsWith('/big')) {
        const big = 'b'.repeat(2 * 1024 * 1024);
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(big.length) }).end(big);
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'thanks' : `no (${status})`);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, ALLOWED_TOOL_HOST, resolve));
    return `http://${ALLOWED_TOOL_HOST}:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The requests to `path` once there are `count` of them. */
  async waitFor(path: string, count = 1, timeoutMs = 30_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.filter((r) => r.path === path);
      if (found.length >= count) return found;
      if (Date.now() > deadline) throw new Error(`${path} got ${found.length} of ${count} requests in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The Standard Webhooks check, written out here rather than taken from the platform's own signing code. */
function verify(secret: string, request: Received): void {
  const id = request.headers['webhook-id'] as string;
  const timestamp = request.headers['webhook-timestamp'] as string;
  expect(id).to.match(/^msg_/);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).to.be.below(300);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest('base64');
  const signatures = (request.headers['webhook-signature'] as string).split(' ');
  expect(signatures).to.include(`v1,${expected}`);
}

async function subscribe(key: string, url: string, events: string[], extra: Record<string, unknown> = {}) {
  const response = await call('POST', '/v1/webhooks', { key, body: { url, events, ...extra } });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body as { webhook: { id: string }; secret: string };
}

async function deliveries(key: string, webhookId: string) {
  const response = await call('GET', `/v1/webhooks/${webhookId}/deliveries`, { key });
  expect(response.status).to.equal(200);
  return response.body.deliveries as any[];
}

/** The subscription's deliveries once `done` holds for them. */
async function deliveriesWhen(key: string, webhookId: string, done: (list: any[]) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(key, webhookId);
    if (done(list)) return list;
    if (Date.now() > deadline) throw new Error(`deliveries never got there: ${JSON.stringify(list)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const BACKOFF_ENV = { WEBHOOK_RETRY_INITIAL_MS: '200', WEBHOOK_RETRY_MAX_MS: '1000', WEBHOOK_RETRY_WINDOW_MS: '4000' };

describe('webhooks', function () {
  this.timeout(120_000);
  const receiver = new Receiver();
  let base: string;

  before(async () => {
    base = await receiver.start();
    // A short back-off, read where deliveries start: the API here, the workers (restarted when they are a process of their own).
    Object.assign(process.env, BACKOFF_ENV);
    if (testWorkerPool().separateProcess) {
      await testWorkerPool().stop();
      await testWorkerPool().start(BACKOFF_ENV);
    }
  });

  after(async () => {
    for (const name of Object.keys(BACKOFF_ENV)) delete process.env[name];
    if (testWorkerPool().separateProcess) {
      await testWorkerPool().stop();
      await testWorkerPool().start();
    }
    await receiver.close();
  });

  it('creates a subscription whose secret is shown once, and refuses private addresses and bad secrets with nothing created', async () => {
    const { key } = await newTenant('wh-crud');
    const created = await subscribe(key, `${base}/ok`, ['run.completed', 'run.paused'], { description: 'ops' });
    expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(created.secret.slice(6), 'base64').length).to.equal(32);
    const got = await call('GET', `/v1/webhooks/${created.webhook.id}`, { key });
    expect(got.body.webhook).to.include({ url: `${base}/ok`, description: 'ops', enabled: true, disabled_reason: null });
    expect(got.body.webhook.events).to.deep.equal(['run.completed', 'run.paused']);
    expect(JSON.stringify(got.body)).not.to.include(created.secret.slice(6));

    const own = await subscribe(key, `${base}/ok`, ['run.failed'], { secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` });
    expect(own.secret).to.equal(`whsec_${Buffer.alloc(24, 7).toString('base64')}`);

    const portZero = Object.assign(new URL(`${base}/hook`), { port: '0' }).href;
    expect(portZero).to.match(/:0\/hook$/);
    for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://localhost:8080/', 'http://[::1]/x', portZero]) {
      const refused = await call('POST', '/v1/webhooks', { key, body: { url, events: ['run.completed'] } });
      expect(refused.status, url).to.equal(400);
      expect(refused.body.error.fields[0].field).to.equal('body.url');
    }
    const shortSecret = await call('POST', '/v1/webhooks', { key, body: { url: `${base}/ok`, events: ['run.completed'], secret: `whsec_${'A'.repeat(33)}` } });
    expect(shortSecret.status).to.equal(400);
    expect(shortSecret.body.error.fields[0].field).to.equal('body.secret');
    const patchedPrivate = await call('PATCH', `/v1/webhooks/${created.webhook.id}`, { key, body: { url: 'http://192.168.1.1/' } });
    expect(patchedPrivate.status).to.equal(400);
    const standard = await call('POST', '/v1/webhooks', { key: (await newTenant('wh-std')).standardKey, body: { url: `${base}/ok`, events: ['run.completed'] } });
    expect(standard.status).to.equal(403);

    const listed = await call('GET', '/v1/webhooks', { key });
    expect(listed.body.webhooks.map((w: any) => w.id)).to.deep.equal([created.webhook.id, own.webhook.id]);

    // Nothing to say: no body at all, as an empty object (the document marks this body optional).
    const rotated = await call('POST', `/v1/webhooks/${created.webhook.id}/rotate-secret`, { key });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(created.secret);

    const patched = await call('PATCH', `/v1/webhooks/${created.webhook.id}`, { key, body: { events: ['run.failed'], enabled: false } });
    expect(patched.body.webhook).to.include({ enabled: false });
    expect(patched.body.webhook.events).to.deep.equal(['run.failed']);
    expect((await call('DELETE', `/v1/webhooks/${own.webhook.id}`, { key })).body).to.deep.equal({ deleted: true, id: own.webhook.id });
    expect((await call('GET', `/v1/webhooks/${own.webhook.id}`, { key })).status).to.equal(404);
  });

  it('delivers a correctly signed run.completed once a run completes, once however often it is emitted', async () => {
    const { key, tenantId } = await newTenant('wh-run');
    const { webhook, secret } = await subscribe(key, `${base}/ok?t=run`, ['run.completed']);
    const failedOnly = await subscribe(key, `${base}/ok?t=failed-only`, ['run.failed']);
    const agentId = await publishAgent(key, 'greeter', scriptedGraph([{ text: 'Hello there.' }]));
    const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'hi' } });
    const runId = run.frames[0]!.data.run_id as string;

    const [request] = await receiver.waitFor('/ok?t=run');
    verify(secret, request!);
    expect(request!.headers['content-type']).to.equal('application/json');
    const body = JSON.parse(request!.body);
    expect(body.type).to.equal('run.completed');
    expect(Date.parse(body.timestamp)).to.be.a('number').and.not.NaN;
    expect(body.data).to.include({ run_id: runId, agent_id: agentId, status: 'completed', output: 'Hello there.', source: 'api' });

    const [delivery] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
    expect(delivery).to.include({ event_type: 'run.completed', event_id: request!.headers['webhook-id'], attempt_count: 1, series: 1 });
    expect(delivery.attempts).to.have.length(1);
    expect(delivery.attempts[0]).to.include({ number: 1, outcome: 'delivered', response_status: 200, response_body: 'thanks', error: null });
    const detail = await call('GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`, { key });
    expect(detail.body.delivery.payload).to.deep.equal(body);

    // Only subscribed events are sent: nothing for the run.failed subscription.
    expect(await deliveries(key, failedOnly.webhook.id)).to.deep.equal([]);
    expect(receiver.received.filter((r) => r.path === '/ok?t=failed-only')).to.deep.equal([]);

    // As a retried finishRun would: the same event emitted again stores and sends nothing more.
    const { db, temporal } = testPlatform();
    await emitRunEnded({ db, temporal }, { tenantId, runId, status: 'completed' });
    await emitRunEnded({ db, temporal }, { tenantId, runId, status: 'completed' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await deliveries(key, webhook.id)).to.have.length(1);
    expect(receiver.received.filter((r) => r.path === '/ok?t=run')).to.have.length(1);
  });

  it('sends run.completed exactly once when the worker is killed right after the run ended (Postgres: a worker process)', async function () {
    if (!testWorkerPool().separateProcess) {
      console.log('      (skipped on embedded PGlite: killing a worker needs it in its own process, which needs DATABASE_URL)');
      this.skip();
    }
    this.timeout(240_000);
    const { key, tenantId } = await newTenant('wh-crash');
    const { webhook } = await subscribe(key, `${base}/ok?t=crash`, ['run.completed']);
    const agentId = await publishAgent(key, 'crashy', scriptedGraph([{ text: 'Survived.' }]));
    const crashDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-crash-'));
    const env = { ...BACKOFF_ENV, AGENT_PLATFORM_CRASH_DIR: crashDir };
    try {
      await testWorkerPool().stop();
      await testWorkerPool().start(env);
      fs.mkdirSync(path.join(crashDir, 'armed'));
      fs.writeFileSync(path.join(crashDir, 'armed', tenantId), 'finish-run.after-commit');
      const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' } });
      const runId = run.frames[0]!.data.run_id as string;
      const marker = path.join(crashDir, 'finish-run.after-commit', runId);
      while (!fs.existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 50));
      // Committed, not yet emitted: the worker dies here and another one retries finishRun.
      await testWorkerPool().stop();
      expect(receiver.received.filter((r) => r.path === '/ok?t=crash')).to.deep.equal([]);
      await testWorkerPool().start(env);
      const [request] = await receiver.waitFor('/ok?t=crash', 1, 200_000);
      expect(JSON.parse(request!.body).data).to.include({ run_id: runId, output: 'Survived.' });
      expect(fs.existsSync(`${marker}.passed`), 'the retry ran on the new worker').to.equal(true);
      await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await deliveries(key, webhook.id)).to.have.length(1);
      expect(receiver.received.filter((r) => r.path === '/ok?t=crash')).to.have.length(1);
    } finally {
      await testWorkerPool().stop();
      await testWorkerPool().start(BACKOFF_ENV);
      fs.rmSync(crashDir, { recursive: true, force: true });
    }
  });

  it('retries a failing endpoint with back-off: fails twice, then succeeds, three attempts logged', async () => {
    const { key } = await newTenant('wh-flaky');
    const { webhook, secret } = await subscribe(key, `${base}/flaky/run`, ['run.completed']);
    const agentId = await publishAgent(key, 'flaky', scriptedGraph([{ text: 'Done.' }]));
    await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' } });

    const requests = await receiver.waitFor('/flaky/run', 3);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size, 'one message id for every attempt').to.equal(1);
    for (const request of requests) verify(secret, request);
    const [delivery] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
    expect(delivery.attempt_count).to.equal(3);
    expect(delivery.attempts.map((a: any) => [a.number, a.outcome, a.response_status])).to.deep.equal([
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'delivered', 200],
    ]);
    expect(delivery.attempts[0].error).to.equal('answered 500');
    // Back-off: the second wait (400 ms) is longer than the first (200 ms).
    const at = delivery.attempts.map((a: any) => Date.parse(a.attempted_at));
    expect(at[1] - at[0]).to.be.at.least(150);
    expect(at[2] - at[1]).to.be.at.least(350);
  });

  it('gives up once the back-off window is spent, and a redelivery sends the same event again under the same webhook-id', async () => {
    const { key } = await newTenant('wh-fail');
    const { webhook, secret } = await subscribe(key, `${base}/fail?t=window`, ['run.completed']);
    const ping = await call('POST', `/v1/webhooks/${webhook.id}/ping`, { key });
    expect(ping.status).to.equal(202);
    expect(ping.body.delivery).to.include({ status: 'pending', event_type: 'webhook.ping' });
    const [failed] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'failed', 20_000);
    expect(failed.attempts.length).to.be.at.least(3);
    expect(failed.attempts.every((a: any) => a.outcome === 'failed' && a.response_status === 500)).to.equal(true);
    expect(failed.next_attempt_at).to.equal(null);
    const span = Date.parse(failed.attempts.at(-1).attempted_at) - Date.parse(failed.attempts[0].attempted_at);
    expect(span).to.be.below(4_000 + 1_000);

    // The endpoint is fixed: point the subscription at it and redeliver.
    await call('PATCH', `/v1/webhooks/${webhook.id}`, { key, body: { url: `${base}/ok?t=redelivered` } });
    const redelivered = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${failed.id}/redeliver`, { key });
    expect(redelivered.status).to.equal(202);
    expect(redelivered.body.delivery).to.include({ status: 'pending', series: 2 });
    const [request] = await receiver.waitFor('/ok?t=redelivered');
    verify(secret, request!);
    expect(request!.headers['webhook-id']).to.equal(failed.event_id);
    const first = receiver.received.find((r) => r.path === '/fail?t=window')!;
    expect(request!.body, 'the same event body').to.equal(first.body);
    const [done] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
    expect(done.attempts.at(-1)).to.include({ series: 2, number: 1, outcome: 'delivered' });
    expect(done.attempts.filter((a: any) => a.series === 1)).to.have.length(failed.attempts.length);

    const again = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${failed.id}/redeliver`, { key });
    expect(again.status).to.equal(202);
  });

  it('sends run.paused with the question, then run.cancelled when the run is cancelled', async () => {
    const { key } = await newTenant('wh-paused');
    const { webhook, secret } = await subscribe(key, `${base}/ok?t=paused`, ['run.paused', 'run.cancelled']);
    const askHuman = await createBuiltinTool(key, 'ask_human');
    const agentId = await publishAgent(key, 'asker', scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] }, { text: 'ok' }], [askHuman]));
    const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'pick' } });
    const runId = run.frames[0]!.data.run_id as string;

    const [paused] = await receiver.waitFor('/ok?t=paused');
    verify(secret, paused!);
    const body = JSON.parse(paused!.body);
    expect(body.type).to.equal('run.paused');
    expect(body.data).to.include({ run_id: runId, status: 'paused', answer_with: `POST /v1/runs/${runId}/answer` });
    expect(body.data.question).to.deep.equal({ id: 'q_0', question: 'Which colour?' });

    expect((await call('POST', `/v1/runs/${runId}/cancel`, { key })).status).to.be.oneOf([200, 202]);
    const [, cancelled] = await receiver.waitFor('/ok?t=paused', 2);
    expect(JSON.parse(cancelled!.body)).to.deep.include({ type: 'run.cancelled' });
    const list = await deliveriesWhen(key, webhook.id, (l) => l.length === 2 && l.every((d) => d.status === 'delivered'));
    expect(list.map((d) => d.event_type)).to.deep.equal(['run.cancelled', 'run.paused']);
  });

  it('sends experiment.completed when an experiment ends', async () => {
    const { key } = await newTenant('wh-exp');
    const { webhook } = await subscribe(key, `${base}/ok?t=experiment`, ['experiment.completed']);
    const runs = await subscribe(key, `${base}/ok?t=exp-runs`, ['run.completed']);
    const agentId = await publishAgent(key, 'exp', scriptedGraph([{ text: 'Paris' }]));
    const suite = await createSuite(key, agentId, 'capitals', [{ type: 'contains' }]);
    await addCases(key, suite.id, [{ input: 'France?', expected: 'Paris' }]);
    const experiment = await startExperiment(key, { suite: 'capitals', name: 'one', variants: [{ name: 'only' }] });
    await finishedExperiment(key, experiment.id);

    const [request] = await receiver.waitFor('/ok?t=experiment');
    const body = JSON.parse(request!.body);
    expect(body.type).to.equal('experiment.completed');
    expect(body.data).to.include({ experiment_id: experiment.id, status: 'completed', name: 'one', suite_id: suite.id });
    expect(body.data.cells).to.include({ completed: 1, failed: 0 });
    await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
    // An experiment's cell runs are reported by the experiment, not one by one.
    expect(await deliveries(key, runs.webhook.id)).to.deep.equal([]);
  });

  it('refuses an attempt whose address the outbound guard refuses now, and disables a subscription on 410 Gone', async () => {
    const { key, tenantId } = await newTenant('wh-guard');
    const { webhook } = await subscribe(key, `${base}/ok?t=guard`, ['run.completed']);
    // As if the name now resolved somewhere refused: the same delivery, judged under a policy that allows nothing private.
    const { db } = testPlatform();
    const [pending] = await withTenant(db, tenantId, async (tx) => {
      const event = await storeWebhookEvent(tx, tenantId, { type: 'run.completed', dedupeKey: 'test:guard', payload: () => webhookPayload('run.completed', new Date(), {}) });
      return insertDeliveries(tx, tenantId, event.id, [webhook.id]);
    });
    const result = await attemptWebhookDelivery({ db, outboundPolicy: { allow: [] } }, { tenantId, deliveryId: pending!.id, series: 1, number: 1, nextAttemptInMs: null });
    expect(result).to.equal('failed');
    const [delivery] = await deliveries(key, webhook.id);
    expect(delivery.status).to.equal('failed');
    expect(delivery.attempts[0]).to.include({ outcome: 'refused', response_status: null });
    expect(delivery.attempts[0].error).to.match(/^refused: 127\.0\.0\.2 is/);
    expect(receiver.received.filter((r) => r.path === '/ok?t=guard')).to.deep.equal([]);

    const gone = await subscribe(key, `${base}/gone`, ['run.completed']);
    await call('POST', `/v1/webhooks/${gone.webhook.id}/ping`, { key });
    const [ended] = await deliveriesWhen(key, gone.webhook.id, (list) => list[0]?.status === 'failed');
    expect(ended.attempts).to.have.length(1);
    expect(ended.attempts[0]).to.include({ response_status: 410 });
    const after = (await call('GET', `/v1/webhooks/${gone.webhook.id}`, { key })).body.webhook;
    expect(after).to.include({ enabled: false, disabled_reason: 'the endpoint answered 410 Gone' });
    expect((await call('POST', `/v1/webhooks/${gone.webhook.id}/ping`, { key })).status).to.equal(409);
  });

  it('lets a pending delivery whose workflow was terminated be redelivered, and a workflow that gives up ends it as failed', async () => {
    const { key, tenantId } = await newTenant('wh-stalled');
    const { webhook } = await subscribe(key, `${base}/fail?t=stalled`, ['run.completed']);
    const ping = await call('POST', `/v1/webhooks/${webhook.id}/ping`, { key });
    const delivery = ping.body.delivery;
    // Its attempts go on: not yet.
    const early = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, { key });
    expect(early.status).to.equal(409);
    expect(early.body.error.code).to.equal('conflict');

    // An operator terminates the workflow: the row stays pending, with nothing behind it.
    const { db, temporal } = testPlatform();
    await temporal.workflow.getHandle(deliverWebhookWorkflowId(webhook.id, delivery.event_id, 1)).terminate('test: an operator stops it');
    const [stuck] = await deliveries(key, webhook.id);
    expect(stuck.status).to.equal('pending');

    await call('PATCH', `/v1/webhooks/${webhook.id}`, { key, body: { url: `${base}/ok?t=revived` } });
    const revived = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, { key });
    expect(revived.status, JSON.stringify(revived.body)).to.equal(202);
    expect(revived.body.delivery).to.include({ status: 'pending', series: 2 });
    const [request] = await receiver.waitFor('/ok?t=revived');
    expect(request!.headers['webhook-id']).to.equal(delivery.event_id);
    const [done] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status === 'delivered');
    expect(done.attempts.at(-1)).to.include({ series: 2, outcome: 'delivered' });

    // The workflow's last step when an attempt cannot be recorded: ends the series it was making, and no other.
    const [other] = await withTenant(db, tenantId, async (tx) => {
      const event = await storeWebhookEvent(tx, tenantId, { type: 'run.completed', dedupeKey: 'test:give-up', payload: () => webhookPayload('run.completed', new Date(), {}) });
      return insertDeliveries(tx, tenantId, event.id, [webhook.id]);
    });
    const env = new MockActivityEnvironment();
    await env.run(giveUpWebhookDelivery, db, { tenantId, deliveryId: other!.id, series: 2, reason: 'a later series' });
    expect((await deliveries(key, webhook.id)).find((d) => d.id === other!.id).status).to.equal('pending');
    await env.run(giveUpWebhookDelivery, db, { tenantId, deliveryId: other!.id, series: 1, reason: 'Postgres away' });
    const ended = (await deliveries(key, webhook.id)).find((d) => d.id === other!.id);
    expect(ended).to.include({ status: 'failed', next_attempt_at: null });
    expect((await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${other!.id}/redeliver`, { key })).status).to.equal(202);
  });

  it('delivers to an endpoint answering 2xx with a body over 1 MiB, keeping its first 1000 characters', async () => {
    const { key } = await newTenant('wh-big');
    const { webhook } = await subscribe(key, `${base}/big`, ['run.completed']);
    await call('POST', `/v1/webhooks/${webhook.id}/ping`, { key });
    const [delivery] = await deliveriesWhen(key, webhook.id, (list) => list[0]?.status !== 'pending');
    expect(delivery).to.include({ status: 'delivered', attempt_count: 1 });
    expect(delivery.attempts).to.have.length(1);
    expect(delivery.attempts[0]).to.include({ outcome: 'delivered', response_status: 200, response_body: 'b'.repeat(1000) });
  });

  it(`prunes events older than ${WEBHOOK_EVENTS_KEPT_FOR_DAYS} days with their deliveries when new events are stored, keeping pending ones`, async () => {
    const { key, tenantId } = await newTenant('wh-prune');
    const { webhook } = await subscribe(key, `${base}/ok?t=prune`, ['run.completed']);
    const { db } = testPlatform();
    const old = new Date(Date.now() - (WEBHOOK_EVENTS_KEPT_FOR_DAYS + 1) * 86_400_000);
    const recent = new Date(Date.now() - (WEBHOOK_EVENTS_KEPT_FOR_DAYS - 1) * 86_400_000);
    const store = (dedupeKey: string) =>
      withTenant(db, tenantId, async (tx) => {
        const event = await storeWebhookEvent(tx, tenantId, { type: 'run.completed', dedupeKey, payload: () => webhookPayload('run.completed', new Date(), {}) });
        const [delivery] = await insertDeliveries(tx, tenantId, event.id, [webhook.id]);
        return { eventId: event.id, deliveryId: delivery!.id };
      });
    const expired = await store('test:expired');
    const stillPending = await store('test:old-pending');
    const kept = await store('test:recent');
    await withTenant(db, tenantId, async (tx) => {
      await tx.updateTable('webhook_deliveries').set({ status: 'delivered' }).where('id', 'in', [expired.deliveryId, kept.deliveryId]).execute();
      // created_at is never updated by the platform (the schema says so): aged here in plain SQL.
      await sql`update webhook_events set created_at = ${old} where id in (${expired.eventId}, ${stillPending.eventId})`.execute(tx);
      await sql`update webhook_events set created_at = ${recent} where id = ${kept.eventId}`.execute(tx);
    });
    await store('test:new');
    const left = await withTenant(db, tenantId, (tx) => tx.selectFrom('webhook_events').select('dedupe_key').where('tenant_id', '=', tenantId).orderBy('dedupe_key').execute());
    expect(left.map((row) => row.dedupe_key)).to.deep.equal(['test:new', 'test:old-pending', 'test:recent']);
    const logged = (await deliveries(key, webhook.id)).map((d) => d.id);
    expect(logged).to.not.include(expired.deliveryId);
    expect(logged).to.include.members([stillPending.deliveryId, kept.deliveryId]);

    // Newest first, a page at a time.
    expect(logged).to.have.length(3).and.deep.equal([...logged].sort().reverse());
    const first = await call('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=2`, { key });
    expect(first.body.deliveries.map((d: { id: string }) => d.id)).to.deep.equal(logged.slice(0, 2));
    const second = await call('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body).to.deep.include({ next_cursor: null });
    expect(second.body.deliveries.map((d: { id: string }) => d.id)).to.deep.equal(logged.slice(2));
  });

  it(`lets a run's webhook emission fail only until the bookkeeping activity's try ${EMISSION_TRIES}`, async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('Temporal is away');
    };
    const early = new MockActivityEnvironment({ attempt: EMISSION_TRIES - 1 });
    let thrown: unknown;
    await early.run(emitAfterBookkeeping, 'run.completed', failing).catch((err: unknown) => (thrown = err));
    expect((thrown as Error | undefined)?.message).to.equal('Temporal is away');
    await new MockActivityEnvironment({ attempt: EMISSION_TRIES }).run(emitAfterBookkeeping, 'run.completed', failing);
    expect(calls).to.equal(2);
  });

  it("answers 404 for another workspace's subscriptions and deliveries", async () => {
    const owner = await newTenant('wh-owner');
    const other = await newTenant('wh-other');
    const { webhook } = await subscribe(owner.key, `${base}/ok?t=tenancy`, ['run.completed']);
    await call('POST', `/v1/webhooks/${webhook.id}/ping`, { key: owner.key });
    const [delivery] = await deliveriesWhen(owner.key, webhook.id, (list) => list[0]?.status === 'delivered');
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/webhooks/${webhook.id}`],
      ['PATCH', `/v1/webhooks/${webhook.id}`, { description: 'mine now' }],
      ['DELETE', `/v1/webhooks/${webhook.id}`],
      ['POST', `/v1/webhooks/${webhook.id}/rotate-secret`, {}],
      ['POST', `/v1/webhooks/${webhook.id}/ping`],
      ['GET', `/v1/webhooks/${webhook.id}/deliveries`],
      ['GET', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`],
      ['POST', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(method, path, { key: other.key, body });
      expect(response.status, `${method} ${path}`).to.equal(404);
      expect(response.body.error.code).to.equal('not_found');
    }
    expect((await call('GET', '/v1/webhooks', { key: other.key })).body.webhooks).to.deep.equal([]);
    expect((await call('GET', `/v1/webhooks/${webhook.id}`, { key: owner.key })).body.webhook.description).to.equal(null);
    // A delivery id under another of the owner's subscriptions is not found either.
    const second = await subscribe(owner.key, `${base}/ok?t=tenancy2`, ['run.completed']);
    expect((await call('GET', `/v1/webhooks/${second.webhook.id}/deliveries/${delivery.id}`, { key: owner.key })).status).to.equal(404);
  });
});
