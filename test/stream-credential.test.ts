import { expect } from 'chai';
import { insertDeploymentThread } from '../db/deployments.js';
import { insertExperiment, markExperimentRunning } from '../db/experiments.js';
import { appendRunEventsNow } from '../db/run-events.js';
import { findRun } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { createSuite } from './support/evals.js';
import { testPlatform } from './support/global.js';
import { obtainTokens, postToken, registerPublicClient } from './support/oauth-browserless.js';
import { newOAuthUser } from './support/oauth-users.js';
import { recordRunningRun } from './support/recorded-run.js';

/**
 * api/stream-credential.ts: an event stream asks again, while it lasts, whether the credential that
 * opened it still stands, and ends when it does not: an API key revoked, an OAuth grant revoked or its
 * person's membership removed, a deployment's publishable key rotated. Streams of credentials that still
 * stand go on. The runs are recorded as running without a workflow, so their streams stay open.
 */
describe('event streams end when their credential is revoked', () => {
  let tenant: TestTenant;
  let agentId: string;
  let runId: string;
  const opened: OpenStream[] = [];

  before(async () => {
    tenant = await newTenant('stream-credential');
    agentId = await publishAgent(tenant.key, 'followed', scriptedGraph([{ text: 'never run' }]));
    runId = await liveRun(agentId);
  });

  afterEach(() => {
    for (const stream of opened.splice(0)) stream.close();
  });

  async function open(key: string, path: string, headers: Record<string, string> = {}): Promise<OpenStream> {
    const stream = await openStream(key, path, headers);
    opened.push(stream);
    return stream;
  }

  it("ends a run's and an experiment's streams of a revoked API key within seconds, and no other key's", async () => {
    const doomed = await newKey('doomed');
    const kept = await newKey('kept');
    const experimentPath = `/v1/evals/experiments/${await liveExperiment()}/events`;
    const doomedRun = await open(doomed.key, `/v1/runs/${runId}/events`);
    const doomedExperiment = await open(doomed.key, experimentPath);
    const keptRun = await open(kept.key, `/v1/runs/${runId}/events`);
    const keptExperiment = await open(kept.key, experimentPath);
    // Still open while the key stands: longer than its check's interval.
    await sleep(2_500);
    expect(doomedRun.ended, 'the stream of a standing key').to.equal(false);

    const startedAt = Date.now();
    expect((await call('DELETE', `/v1/api-keys/${doomed.id}`, { key: tenant.key })).status).to.equal(200);
    await within(5_000, Promise.all([doomedRun.end, doomedExperiment.end]), 'the revoked key\'s streams end');
    expect(Date.now() - startedAt).to.be.below(5_000);

    // The other key's streams are open and still deliver.
    expect(keptRun.ended || keptExperiment.ended).to.equal(false);
    const [seq] = await appendRunEventsNow(testPlatform().db, tenant.tenantId, runId, [{ type: 'message.delta', data: { text: 'still here' } }]);
    await within(5_000, keptRun.received(`id: ${seq}\n`), 'the standing key\'s stream gets the next event');
  });

  it("ends a stream of an OAuth access token when its grant is revoked or its person leaves, and a visitor's when the publishable key is rotated", async () => {
    const client = await registerPublicClient();
    const revoker = await newOAuthUser([tenant.tenantId], 'revoker');
    const leaver = await newOAuthUser([tenant.tenantId], 'leaver');
    const stayer = await newOAuthUser([tenant.tenantId], 'stayer');
    const revoked = (await obtainTokens({ client, user: revoker })).access_token;
    const left = (await obtainTokens({ client, user: leaver })).access_token;
    const standing = (await obtainTokens({ client, user: stayer })).access_token;
    const deployment = await newDeployment();
    const visitors = await visitorsRun(deployment.id);
    const keptDeployment = await newDeployment();
    const keptVisitors = await visitorsRun(keptDeployment.id);

    const revokedStream = await open(revoked, `/v1/runs/${runId}/events`);
    const leftStream = await open(left, `/v1/runs/${runId}/events`);
    const standingStream = await open(standing, `/v1/runs/${runId}/events`);
    const visitorStream = await open(deployment.publishable_key, visitors.path, visitors.headers);
    const keptVisitorStream = await open(keptDeployment.publishable_key, keptVisitors.path, keptVisitors.headers);
    // Past the first database check of every stream (every five seconds): the standing ones are still open.
    await sleep(6_500);
    expect([revokedStream, leftStream, standingStream, visitorStream, keptVisitorStream].map((stream) => stream.ended)).to.deep.equal([false, false, false, false, false]);

    expect((await postToken({ token: revoked, client_id: client.clientId }, { path: '/oauth/revoke' })).status).to.equal(200);
    await testPlatform().db.deleteFrom('memberships').where('user_id', '=', leaver.userId).execute();
    expect((await call('POST', `/v1/deployments/${deployment.id}/rotate-key`, { key: tenant.key })).status).to.equal(200);
    // A check every five seconds, from an answer at most five seconds old.
    await within(15_000, Promise.all([revokedStream.end, leftStream.end, visitorStream.end]), 'the streams of the withdrawn credentials end');

    // The streams of the credentials that stand are open and still deliver.
    expect(standingStream.ended, 'the stream of a token whose grant stands').to.equal(false);
    expect(keptVisitorStream.ended, "the stream of a deployment's key that was not rotated").to.equal(false);
    const db = testPlatform().db;
    const [seq] = await appendRunEventsNow(db, tenant.tenantId, runId, [{ type: 'message.delta', data: { text: 'still here' } }]);
    await within(5_000, standingStream.received(`id: ${seq}\n`), "the standing token's stream gets the next event");
    const [visitorSeq] = await appendRunEventsNow(db, tenant.tenantId, keptVisitors.runId, [{ type: 'message.delta', data: { text: 'still here' } }]);
    await within(5_000, keptVisitorStream.received(`id: ${visitorSeq}\n`), "the kept visitor's stream gets the next event");
  });

  it("ends a visitor's stream when its page's origin is taken off the deployment's allowed_origins, and no other origin's", async () => {
    const deployment = await newDeployment({ allowed_origins: ['https://dropped.example', 'https://kept.example'] });
    const visitors = await visitorsRun(deployment.id);
    const dropped = await open(deployment.publishable_key, visitors.path, { ...visitors.headers, origin: 'https://dropped.example' });
    const kept = await open(deployment.publishable_key, visitors.path, { ...visitors.headers, origin: 'https://kept.example' });
    await sleep(6_500);
    expect([dropped.ended, kept.ended]).to.deep.equal([false, false]);

    const patched = await call('PATCH', `/v1/deployments/${deployment.id}`, { key: tenant.key, body: { allowed_origins: ['https://kept.example'] } });
    expect(patched.status).to.equal(200);
    await within(15_000, dropped.end, "the dropped origin's stream ends");
    expect(kept.ended, "the kept origin's stream").to.equal(false);
    const [seq] = await appendRunEventsNow(testPlatform().db, tenant.tenantId, visitors.runId, [{ type: 'message.delta', data: { text: 'still here' } }]);
    await within(5_000, kept.received(`id: ${seq}\n`), "the kept origin's stream gets the next event");
  });

  async function newDeployment(settings: Record<string, unknown> = {}): Promise<{ id: string; publishable_key: string }> {
    const created = await call('POST', '/v1/deployments', { key: tenant.key, body: { agent: agentId, slug: `cred-${Math.random().toString(36).slice(2, 8)}`, ...settings } });
    expect(created.status).to.equal(201);
    return created.body.deployment;
  }

  /** A live run of a visitor's thread of the deployment, and the visitor's token for it. */
  async function visitorsRun(deploymentId: string): Promise<{ runId: string; path: string; headers: Record<string, string> }> {
    const db = testPlatform().db;
    const id = await recordRunningRun(db, { tenantId: tenant.tenantId, agentId, input: 'x', source: 'deployment', deploymentId });
    const token = await withTenant(db, tenant.tenantId, async (tx) => insertDeploymentThread(tx, tenant.tenantId, deploymentId, (await findRun(tx, tenant.tenantId, id))!.thread_id));
    return { runId: id, path: `/v1/runs/${id}/events`, headers: { 'x-visitor-token': token } };
  }

  async function newKey(name: string): Promise<{ id: string; key: string }> {
    const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard', name } });
    expect(created.status).to.equal(201);
    return { id: created.body.api_key.id, key: created.body.key };
  }

  function liveRun(agent: string): Promise<string> {
    return recordRunningRun(testPlatform().db, { tenantId: tenant.tenantId, agentId: agent, input: 'x', source: 'api' });
  }

  /** An experiment recorded as running, without its workflow: its stream stays open. */
  async function liveExperiment(): Promise<string> {
    const suite = await createSuite(tenant.key, agentId, `followed-${Math.random().toString(36).slice(2, 8)}`);
    return withTenant(testPlatform().db, tenant.tenantId, async (tx) => {
      const experiment = await insertExperiment(tx, tenant.tenantId, {
        agentId,
        suiteId: suite.id,
        suiteName: suite.name,
        name: 'followed',
        description: null,
        variants: [],
        repeats: 1,
        concurrency: 1,
        primaryScorer: null,
        baselineExperimentId: null,
        caseCount: 0,
        cellCount: 0,
      });
      expect(await markExperimentRunning(tx, tenant.tenantId, experiment.id)).to.equal('running');
      return experiment.id;
    });
  }
});

interface OpenStream {
  /** Settles when the server ends the stream. */
  end: Promise<void>;
  readonly ended: boolean;
  /** Settles once the text read so far contains `text`. */
  received(text: string): Promise<void>;
  close(): void;
}

async function openStream(key: string, path: string, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(testPlatform().apiUrl + path, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: controller.signal });
  expect(response.status, `${path} opens`).to.equal(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const waiters: Array<() => void> = [];
  const state = { ended: false };
  const end = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      text += value;
      for (const wake of waiters.splice(0)) wake();
    }
    state.ended = true;
  })();
  const stream: OpenStream = {
    get ended() {
      return state.ended;
    },
    end,
    received: async (wanted) => {
      while (!text.includes(wanted)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () => controller.abort(),
  };
  return stream;
}

async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
