import { expect } from 'chai';
import { clientAddress } from '../api/client-address.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

async function createDeployment(key: string, body: Record<string, unknown>) {
  const response = await call('POST', '/v1/deployments', { key, body });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.deployment as { id: string; slug: string; publishable_key: string; agent_id: string; url: string; version: number | null };
}

/** Starts a run with `key` and reads its stream to the end; answers the run id, thread id, visitor token (a new thread's) and last frame. */
async function runWith(key: string, agentId: string, input: string, extra: { thread_id?: string; headers?: Record<string, string> } = {}) {
  const { headers, ...body } = extra;
  const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input, ...body }, headers });
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  const created = response.frames[0]!;
  return {
    runId: created.data.run_id as string,
    threadId: created.data.thread_id as string,
    visitorToken: created.data.visitor_token as string | undefined,
    last: response.frames.at(-1)!,
    response,
  };
}

const visitor = (token: string | undefined, headers: Record<string, string> = {}) => ({ ...headers, 'x-visitor-token': token ?? '' });

describe('deployments', () => {
  let tenant: TestTenant;
  let agentId: string;
  let otherAgentId: string;

  before(async () => {
    tenant = await newTenant('deploy');
    agentId = await publishAgent(tenant.key, 'support-bot', scriptedGraph([{ text: 'Hello from v1.' }]));
    // Version 2 is published; version 1 stays for pinning.
    await call('POST', `/v1/agents/${agentId}/versions`, { key: tenant.key, body: { graph: scriptedGraph([{ text: 'Hello from v2.' }]) } });
    otherAgentId = await publishAgent(tenant.key, 'internal-bot', scriptedGraph([{ text: 'internal' }]));
  });

  describe('CRUD', () => {
    it('creates, reads (by id and slug), lists, updates, rotates and deletes; writes need a management key', async () => {
      const slug = unique('help');
      const created = await call('POST', '/v1/deployments', {
        key: tenant.key,
        body: { agent: 'support-bot', slug, title: 'Help desk', allowed_origins: ['https://shop.example.com'], rate_limit: { runs_per_minute: 30 } },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const deployment = created.body.deployment;
      expect(deployment).to.include({ slug, title: 'Help desk', agent_id: agentId, version: null, url: `${testPlatform().apiUrl}/d/${slug}` });
      expect(deployment.allowed_origins).to.deep.equal(['https://shop.example.com']);
      expect(deployment.rate_limit).to.deep.equal({ runs_per_minute: 30, runs_per_minute_per_visitor: 10 });
      expect(deployment.publishable_key).to.match(/^svc_pk_[0-9A-Za-z]{43}$/);

      expect((await call('GET', `/v1/deployments/${deployment.id}`, { key: tenant.standardKey })).body.deployment).to.deep.equal(deployment);
      expect((await call('GET', `/v1/deployments/${slug}`, { key: tenant.key })).body.deployment.id).to.equal(deployment.id);
      const listed = await call('GET', '/v1/deployments?limit=200', { key: tenant.standardKey });
      expect(listed.body.deployments.map((d: { id: string }) => d.id)).to.include(deployment.id);

      const patched = await call('PATCH', `/v1/deployments/${deployment.id}`, {
        key: tenant.key,
        body: { version: 1, title: null, allowed_origins: ['http://localhost:3000'], rate_limit: { runs_per_minute_per_visitor: 3 } },
      });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body.deployment).to.include({ version: 1, title: null, publishable_key: deployment.publishable_key });
      expect(patched.body.deployment.allowed_origins).to.deep.equal(['http://localhost:3000']);
      expect(patched.body.deployment.rate_limit).to.deep.equal({ runs_per_minute: 30, runs_per_minute_per_visitor: 3 });

      expect((await call('POST', '/v1/deployments', { key: tenant.standardKey, body: { agent: agentId, slug: unique('x') } })).status).to.equal(403);
      expect((await call('PATCH', `/v1/deployments/${deployment.id}`, { key: tenant.standardKey, body: { title: 'x' } })).status).to.equal(403);
      expect((await call('DELETE', `/v1/deployments/${deployment.id}`, { key: tenant.standardKey })).status).to.equal(403);

      const rotated = await call('POST', `/v1/deployments/${deployment.id}/rotate-key`, { key: tenant.key });
      expect(rotated.status).to.equal(200);
      const newKey = rotated.body.deployment.publishable_key;
      expect(newKey).to.match(/^svc_pk_/).and.not.equal(deployment.publishable_key);
      expect((await stream('POST', `/v1/agents/${agentId}/runs`, { key: deployment.publishable_key, body: { input: 'hi' } })).status).to.equal(401);
      const pinned = await runWith(newKey, agentId, 'hi');
      expect(pinned.last.event).to.equal('run.completed');
      expect(pinned.last.data.output, 'the pinned version runs, not the published one').to.equal('Hello from v1.');

      const deleted = await call('DELETE', `/v1/deployments/${deployment.id}`, { key: tenant.key });
      expect(deleted.body).to.deep.equal({ deleted: true, id: deployment.id });
      expect((await call('GET', `/v1/deployments/${deployment.id}`, { key: tenant.key })).status).to.equal(404);
      expect((await stream('POST', `/v1/agents/${agentId}/runs`, { key: newKey, body: { input: 'hi' } })).status).to.equal(401);
      const kept = await call('GET', `/v1/runs/${pinned.runId}`, { key: tenant.key });
      expect(kept.body.run, 'its runs stay').to.include({ source: 'deployment', deployment_id: deployment.id });
    });

    it('keeps slugs unique across the whole service, and refuses what JSON Schema cannot', async () => {
      const slug = unique('taken');
      await createDeployment(tenant.key, { agent: agentId, slug });
      const other = await newTenant('deploy-other');
      const otherAgent = await publishAgent(other.key, 'bot', scriptedGraph([{ text: 'x' }]));
      const clash = await call('POST', '/v1/deployments', { key: other.key, body: { agent: otherAgent, slug } });
      expect(clash.status).to.equal(409);
      expect(clash.body.error.message).to.contain(slug);

      const mine = await createDeployment(other.key, { agent: otherAgent, slug: unique('mine') });
      expect((await call('PATCH', `/v1/deployments/${mine.id}`, { key: other.key, body: { slug } })).status).to.equal(409);
      expect((await call('GET', `/v1/deployments/${mine.id}`, { key: tenant.key })).status, "another workspace's deployment").to.equal(404);
      expect((await call('GET', `/v1/deployments/${slug}`, { key: other.key })).status).to.equal(404);
      expect((await call('DELETE', `/v1/deployments/${mine.id}`, { key: tenant.key })).status).to.equal(404);
      expect((await call('POST', `/v1/deployments/${mine.id}/rotate-key`, { key: tenant.key })).status).to.equal(404);

      const cases: Array<[Record<string, unknown>, string]> = [
        [{ agent: agentId, slug: 'Not-Lower' }, 'body.slug'],
        [{ agent: agentId, slug: '-edge' }, 'body.slug'],
        [{ agent: agentId, slug: unique('a'), allowed_origins: ['https://example.com/path'] }, 'body.allowed_origins.0'],
        [{ agent: agentId, slug: unique('a'), allowed_origins: ['https://example.com:443'] }, 'body.allowed_origins.0'],
        [{ agent: agentId, slug: unique('a'), allowed_origins: ['https://example.com', 'http://localhost:0'] }, 'body.allowed_origins.1'],
        [{ agent: agentId, slug: unique('a'), version: 99 }, 'body.version'],
        [{ agent: agentId, slug: unique('a'), rate_limit: { runs_per_minute: 0 } }, 'body.rate_limit.runs_per_minute'],
      ];
      for (const [body, field] of cases) {
        const refused = await call('POST', '/v1/deployments', { key: tenant.key, body });
        expect(refused.status, JSON.stringify(body)).to.equal(400);
        expect(refused.body.error.fields.map((f: { field: string }) => f.field).join(' '), JSON.stringify(body)).to.contain(field);
      }
      expect((await call('POST', '/v1/deployments', { key: tenant.key, body: { agent: 'no-such-agent', slug: unique('a') } })).status).to.equal(404);
      const listed = await call('GET', '/v1/deployments?limit=200', { key: tenant.key });
      expect(listed.body.deployments.filter((d: { slug: string }) => d.slug.startsWith('a-')), 'nothing half-written').to.deep.equal([]);
    });
  });

  describe('the publishable key', () => {
    let deployment: Awaited<ReturnType<typeof createDeployment>>;
    let pk: string;
    before(async () => {
      deployment = await createDeployment(tenant.key, { agent: agentId, slug: unique('pk'), allowed_origins: ['https://shop.example.com'] });
      pk = deployment.publishable_key;
    });

    it('is refused by every operation of the OpenAPI document but its agent\'s runs', async () => {
      const document = (await call('GET', '/openapi.json')).body;
      // The operations it may call, each with a valid body: what they name is not the key's, so 404.
      const allowed = new Map<string, string | undefined>([['startRun', '{"input":"x"}'], ['getRun', undefined], ['streamRunEvents', undefined], ['answerRun', '{"answer":"x"}']]);
      let refused = 0;
      for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, { operationId: string; security?: unknown[] }>>)) {
        for (const [method, operation] of Object.entries(methods)) {
          if (Array.isArray(operation.security) && operation.security.length === 0) continue; // public: no credential is read
          const concrete = path.replace(/\{[^}]+\}/g, 'someone-elses');
          const response = await fetch(testPlatform().apiUrl + concrete, {
            method: method.toUpperCase(),
            headers: { authorization: `Bearer ${pk}`, 'content-type': 'application/json' },
            body: allowed.get(operation.operationId) ?? (method === 'get' || method === 'delete' ? undefined : '{}'),
          });
          const body = (await response.json()) as { error: { code: string } };
          if (allowed.has(operation.operationId)) {
            expect(response.status, `${operation.operationId} ${JSON.stringify(body)}`).to.equal(404);
          } else {
            expect(response.status, `${operation.operationId} ${JSON.stringify(body)}`).to.equal(403);
            expect(body.error.code).to.equal('forbidden');
            refused++;
          }
        }
      }
      expect(refused).to.be.greaterThan(60);
      const mcp = await fetch(`${testPlatform().apiUrl}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pk}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(mcp.status, 'the MCP endpoint refuses it too').to.equal(403);
    });

    it("starts, reads and continues its own runs only, and never another agent's", async () => {
      const first = await runWith(pk, agentId, 'hello');
      expect(first.last.event).to.equal('run.completed');
      expect(first.last.data.output).to.equal('Hello from v2.');
      expect(first.visitorToken).to.match(/^svc_vt_[0-9A-Za-z]{43}$/);
      const read = await call('GET', `/v1/runs/${first.runId}`, { key: pk, headers: visitor(first.visitorToken) });
      expect(read.status).to.equal(200);
      expect(read.body.run).to.include({ source: 'deployment', deployment_id: deployment.id, agent_id: agentId, thread_id: first.threadId });
      const events = await stream('GET', `/v1/runs/${first.runId}/events`, { key: pk, headers: visitor(first.visitorToken) });
      expect(events.frames.at(-1)!.event).to.equal('run.completed');
      expect(events.frames[0]!.data, 'the token is handed out once, not kept in the log').not.to.have.property('visitor_token');
      const byOwner = await stream('GET', `/v1/runs/${first.runId}/events`, { key: tenant.key });
      expect(byOwner.frames[0]!.data).not.to.have.property('visitor_token');

      const second = await runWith(pk, agentId, 'again', { thread_id: first.threadId, headers: visitor(first.visitorToken) });
      expect(second.threadId, 'the thread continues').to.equal(first.threadId);
      expect(second.visitorToken, 'a continued thread keeps its token').to.equal(undefined);
      const bySource = await call('GET', `/v1/agents/${agentId}/runs?source=deployment`, { key: tenant.key });
      expect(bySource.body.runs.map((r: { id: string }) => r.id)).to.include.members([first.runId, second.runId]);

      const byApi = await runWith(tenant.key, agentId, 'from the API');
      expect(byApi.last.event).to.equal('run.completed');
      expect((await call('GET', `/v1/runs/${byApi.runId}`, { key: pk })).status, 'a run it did not start').to.equal(404);
      expect((await stream('GET', `/v1/runs/${byApi.runId}/events`, { key: pk })).status).to.equal(404);
      expect((await call('POST', `/v1/runs/${byApi.runId}/answer`, { key: pk, body: { answer: 'x' } })).status).to.equal(404);
      const foreignThread = await stream('POST', `/v1/agents/${agentId}/runs`, { key: pk, body: { input: 'x', thread_id: byApi.threadId } });
      expect(foreignThread.status, 'a thread it did not start').to.equal(404);

      const otherAgent = await stream('POST', `/v1/agents/${otherAgentId}/runs`, { key: pk, body: { input: 'x' } });
      expect(otherAgent.status, "another agent's run").to.equal(404);
      expect((await stream('POST', '/v1/agents/internal-bot/runs', { key: pk, body: { input: 'x' } })).status).to.equal(404);

      const sibling = await createDeployment(tenant.key, { agent: agentId, slug: unique('sibling') });
      const siblingRun = await runWith(sibling.publishable_key, agentId, 'sibling');
      expect((await call('GET', `/v1/runs/${siblingRun.runId}`, { key: pk, headers: visitor(siblingRun.visitorToken) })).status, "another deployment's run").to.equal(404);
      expect((await call('GET', `/v1/runs/${first.runId}`, { key: sibling.publishable_key, headers: visitor(first.visitorToken) })).status).to.equal(404);
      const siblingThread = await stream('POST', `/v1/agents/${agentId}/runs`, { key: pk, body: { input: 'x', thread_id: siblingRun.threadId }, headers: visitor(siblingRun.visitorToken) });
      expect(siblingThread.status, "another deployment's thread").to.equal(404);
    });

    it("keeps each visitor's conversation to the visitor: the run id is not enough", async () => {
      // A deployment of its own: the runs below would use up the shared one's per-visitor limit.
      const pk = (await createDeployment(tenant.key, { agent: agentId, slug: unique('visitors'), rate_limit: { runs_per_minute_per_visitor: 100 } })).publishable_key;
      const mine = await runWith(pk, agentId, 'my conversation');
      const theirs = await runWith(pk, agentId, 'their conversation');
      expect(theirs.visitorToken).to.be.a('string').and.not.equal(mine.visitorToken);
      for (const [what, headers] of [['no token', {}], ["another visitor's token", visitor(theirs.visitorToken)], ['a made-up token', visitor('svc_vt_x')]] as const) {
        expect((await call('GET', `/v1/runs/${mine.runId}`, { key: pk, headers })).status, `getRun, ${what}`).to.equal(404);
        expect((await stream('GET', `/v1/runs/${mine.runId}/events`, { key: pk, headers })).status, `streamRunEvents, ${what}`).to.equal(404);
        expect((await call('POST', `/v1/runs/${mine.runId}/answer`, { key: pk, headers, body: { answer: 'x' } })).status, `answerRun, ${what}`).to.equal(404);
        const continued = await stream('POST', `/v1/agents/${agentId}/runs`, { key: pk, headers, body: { input: 'x', thread_id: mine.threadId } });
        expect(continued.status, `startRun with thread_id, ${what}`).to.equal(404);
      }
      expect((await call('GET', `/v1/runs/${mine.runId}`, { key: pk, headers: visitor(mine.visitorToken) })).status).to.equal(200);
      expect((await call('GET', `/v1/runs/${mine.runId}`, { key: tenant.key })).status, 'an API key needs no token').to.equal(200);
      const byApi = await runWith(tenant.key, agentId, 'from the API');
      expect(byApi.visitorToken, 'only a publishable key is handed one').to.equal(undefined);

      // Request ids are random: they say nothing about the ids made next to them.
      const ids = await Promise.all([1, 2, 3].map(async () => (await call('GET', `/v1/runs/${mine.runId}`, { key: pk, headers: visitor(mine.visitorToken) })).headers.get('x-request-id')!));
      for (const id of ids) expect(id).to.match(/^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(ids.map((id) => id.slice(0, 12))).size, 'no shared time prefix').to.equal(3);
    });

    it('shows a visitor the conversation, never the tool calls, prompts or guardrail findings behind it', async () => {
      const calculator = await createBuiltinTool(tenant.key, 'calculator');
      // The argument and the result appear nowhere but in the tool call: not in the input, nor the reply.
      const tooled = await publishAgent(tenant.key, unique('tooled'), scriptedGraph([
        { tool_calls: [{ tool: 'calculator', arguments: { expression: '1234567 * 7' } }] },
        { text: 'It is late.' },
      ], [calculator]));
      const deployed = await createDeployment(tenant.key, { agent: tooled, slug: unique('tooled') });
      const run = await runWith(deployed.publishable_key, tooled, 'how much is it?');
      expect(run.last.event).to.equal('run.completed');
      expect(run.last.data.output).to.equal('It is late.');

      const owner = await call('GET', `/v1/runs/${run.runId}`, { key: tenant.key });
      expect(owner.body.steps, 'the workspace sees the tool call').to.have.length(1);
      expect(JSON.stringify(owner.body)).to.contain('1234567 * 7').and.contain('8641969');
      const ownerEvents = await stream('GET', `/v1/runs/${run.runId}/events`, { key: tenant.key });
      expect(ownerEvents.frames.map((f) => f.event)).to.include.members(['tool_call.started', 'tool_call.completed']);

      const headers = visitor(run.visitorToken);
      const read = await call('GET', `/v1/runs/${run.runId}`, { key: deployed.publishable_key, headers });
      expect(read.status).to.equal(200);
      expect(read.body.steps).to.deep.equal([]);
      expect(read.body.run).to.include({ output: 'It is late.' });
      expect(read.body.run).to.deep.include({ prompts: [], skills: [], guardrail_trips: [] });
      expect(owner.body.run.usage.prompt_tokens, 'the workspace sees the token counts').to.be.a('number');
      expect(read.body.run.usage).to.deep.equal({ prompt_tokens: null, completion_tokens: null, total_tokens: null, cost_usd: null, duration_ms: owner.body.run.usage.duration_ms });
      const events = await stream('GET', `/v1/runs/${run.runId}/events`, { key: deployed.publishable_key, headers });
      for (const response of [run.response, events]) {
        const types = new Set(response.frames.map((f) => f.event));
        expect([...types].filter((type) => !/^(run\.|message\.delta$|message\.completed$|attempt\.reset$)/.test(type))).to.deep.equal([]);
        expect(types).to.include('run.completed');
        expect(JSON.stringify(response.frames), 'no tool arguments or results').not.to.match(/1234567|8641969|tool_calls|"tool"/);
        const completed = response.frames.find((f) => f.event === 'run.completed')!;
        expect(completed.data.usage, 'no token counts or cost in the events').to.include({ prompt_tokens: null, total_tokens: null, cost_usd: null });
      }
    });

    it("shows a visitor a failure's code and a fixed sentence, never what the guardrail matched", async () => {
      const name = unique('visitor-block');
      await call('POST', '/v1/guardrails', { key: tenant.key, body: { name, kind: 'keyword', action: 'block', target: 'input', config: { keywords: ['zebra-passphrase-77'] } } });
      try {
        const guarded = await publishAgent(tenant.key, unique('guarded'), { ...scriptedGraph([{ text: 'never said' }]), guardrails: [name] });
        const deployed = await createDeployment(tenant.key, { agent: guarded, slug: unique('guarded') });
        const run = await runWith(deployed.publishable_key, guarded, 'my zebra-passphrase-77 please');
        expect(run.last.event).to.equal('run.failed');

        const owner = await call('GET', `/v1/runs/${run.runId}`, { key: tenant.key });
        expect(owner.body.run.error.code).to.equal('guardrail_blocked');
        expect(owner.body.run.error.message, 'the workspace sees the finding').to.contain(name).and.contain('zebra-passphrase-77');

        const headers = visitor(run.visitorToken);
        const read = await call('GET', `/v1/runs/${run.runId}`, { key: deployed.publishable_key, headers });
        const events = await stream('GET', `/v1/runs/${run.runId}/events`, { key: deployed.publishable_key, headers });
        const failed = [run.response, events].map((response) => response.frames.find((f) => f.event === 'run.failed')!.data.error);
        for (const error of [read.body.run.error, ...failed]) {
          expect(error).to.deep.equal({ code: 'guardrail_blocked', message: 'the message was blocked by the assistant’s safety rules' });
        }
        expect(JSON.stringify(read.body)).not.to.contain(name);
        for (const response of [run.response, events]) expect(JSON.stringify(response.frames)).not.to.contain(name);
      } finally {
        await call('PATCH', `/v1/guardrails/${name}`, { key: tenant.key, body: { enabled: false } });
      }
    });

    it('answers the ask_human questions of its own runs', async () => {
      const askHuman = await createBuiltinTool(tenant.key, 'ask_human');
      const asker = await publishAgent(tenant.key, 'asker', scriptedGraph([
        { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which size?' } }] },
        { text: 'Size noted.' },
      ], [askHuman]));
      const asking = await createDeployment(tenant.key, { agent: asker, slug: unique('ask') });
      const paused = await runWith(asking.publishable_key, asker, 'order a shirt');
      expect(paused.last.event).to.equal('run.paused');
      expect(paused.last.data).to.include({ question: 'Which size?' });
      const headers = visitor(paused.visitorToken);
      expect((await call('POST', `/v1/runs/${paused.runId}/answer`, { key: pk, headers, body: { answer: 'S' } })).status, "another deployment's key").to.equal(404);
      const answered = await call('POST', `/v1/runs/${paused.runId}/answer`, { key: asking.publishable_key, headers, body: { answer: 'M' } });
      expect(answered.status).to.equal(200);
      const rest = await stream('GET', `/v1/runs/${paused.runId}/events`, { key: asking.publishable_key, headers: visitor(paused.visitorToken, { 'last-event-id': String(paused.last.id) }) });
      expect(rest.frames.at(-1)!.event).to.equal('run.completed');
      expect(rest.frames.at(-1)!.data.output).to.equal('Size noted.');
    });

    it('answers CORS for its listed origins only, preflight included', async () => {
      const api = testPlatform().apiUrl;
      const preflight = (origin: string, path = `/v1/agents/${agentId}/runs`, method = 'POST') =>
        fetch(api + path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' } });

      const ok = await preflight('https://shop.example.com');
      expect(ok.status).to.equal(204);
      expect(ok.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
      expect(ok.headers.get('access-control-allow-methods')).to.contain('POST');
      expect(ok.headers.get('access-control-allow-headers')).to.match(/authorization/i).and.match(/x-visitor-token/i);
      const events = await preflight('https://shop.example.com', '/v1/runs/run_x/events', 'GET');
      expect(events.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
      // In any case and with a trailing slash, as routing takes the request itself.
      const unusualPath = await preflight('https://shop.example.com', `/V1/Agents/${agentId}/RUNS/`);
      expect(unusualPath.status).to.equal(204);
      expect(unusualPath.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');

      expect((await preflight('https://evil.example.net')).headers.get('access-control-allow-origin'), 'an unlisted origin').to.equal(null);
      expect((await preflight('https://shop.example.com', '/v1/agents', 'POST')).headers.get('access-control-allow-origin'), 'an operation the key may not use').to.equal(null);

      const allowed = await stream('POST', `/v1/agents/${agentId}/runs`, { key: pk, body: { input: 'hi' }, headers: { origin: 'https://shop.example.com' } });
      expect(allowed.status).to.equal(200);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
      expect(allowed.headers.get('access-control-expose-headers')).to.contain('RateLimit-Remaining');
      const runId = allowed.frames[0]!.data.run_id;
      const token = allowed.frames[0]!.data.visitor_token as string;
      const read = await call('GET', `/v1/runs/${runId}`, { key: pk, headers: visitor(token, { origin: 'https://shop.example.com' }) });
      expect(read.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');

      const denied = await stream('POST', `/v1/agents/${agentId}/runs`, { key: pk, body: { input: 'hi' }, headers: { origin: 'https://evil.example.net' } });
      expect(denied.status).to.equal(403);
      expect(denied.headers.get('access-control-allow-origin')).to.equal(null);
      const sameOrigin = await call('GET', `/v1/runs/${runId}`, { key: pk, headers: visitor(token, { origin: new URL(api).origin }) });
      expect(sameOrigin.status, 'the hosted page, on the service\'s own origin').to.equal(200);
      const withApiKey = await call('GET', `/v1/runs/${runId}`, { key: tenant.key, headers: { origin: 'https://shop.example.com' } });
      expect(withApiKey.headers.get('access-control-allow-origin'), 'secret keys never get CORS').to.equal(null);
    });

    it('counts a visitor by its IPv4 address, or by the /64 of its IPv6 one', () => {
      expect(clientAddress('203.0.113.7')).to.equal('203.0.113.7');
      expect(clientAddress('::ffff:203.0.113.7')).to.equal('203.0.113.7');
      expect(clientAddress('2001:db8:85a3:8d3:1319:8a2e:370:7348')).to.equal('2001:db8:85a3:8d3::/64');
      expect(clientAddress('2001:DB8:85A3:08D3::1')).to.equal('2001:db8:85a3:8d3::/64');
      expect(clientAddress('2001:db8::1')).to.equal('2001:db8:0:0::/64');
      expect(clientAddress('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
      expect(clientAddress('::1')).to.equal('0:0:0:0::/64');
    });

    it('runs under the deployment\'s own limits: per deployment and per visitor', async () => {
      const perDeployment = await createDeployment(tenant.key, { agent: agentId, slug: unique('limit'), rate_limit: { runs_per_minute: 2, runs_per_minute_per_visitor: 100 } });
      const perVisitor = await createDeployment(tenant.key, { agent: agentId, slug: unique('visitor'), rate_limit: { runs_per_minute: 100, runs_per_minute_per_visitor: 1 } });
      for (const [deployed, allowedRuns] of [[perDeployment, 2], [perVisitor, 1]] as const) {
        for (let i = 0; i < allowedRuns; i++) {
          const run = await runWith(deployed.publishable_key, agentId, `run ${i}`);
          expect(run.response.headers.get('ratelimit-remaining')).to.equal(String(allowedRuns - i - 1));
        }
        const refused = await stream('POST', `/v1/agents/${agentId}/runs`, { key: deployed.publishable_key, body: { input: 'one more' } });
        expect(refused.status).to.equal(429);
        expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      }
      const unaffected = await runWith(pk, agentId, 'another deployment is not limited by theirs');
      expect(unaffected.last.event).to.equal('run.completed');
    });
  });
});
