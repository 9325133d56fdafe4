import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

describe('runs: tenant isolation', () => {
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let runId: string;
  let threadId: string;
  let agentId: string;

  before(async () => {
    a = await newTenant('runs-a');
    b = await newTenant('runs-b');
    const tool = await createBuiltinTool(a.key, 'calculator');
    agentId = await publishAgent(a.key, 'private', scriptedGraph([{ tool_calls: [{ tool: 'calculator', arguments: { expression: '1+2' } }] }, { text: 'three' }], [tool]));
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: a.key, body: { input: 'secret input' } });
    runId = response.frames[0]!.data.run_id;
    threadId = response.frames[0]!.data.thread_id;
  });

  it("answers 404 to another tenant's run, events, steps, thread, answer, cancel and replay", async () => {
    for (const [method, path] of [
      ['GET', `/v1/runs/${runId}`],
      ['GET', `/v1/runs/${runId}/events`],
      ['POST', `/v1/runs/${runId}/cancel`],
      ['POST', `/v1/runs/${runId}/replay`],
      ['GET', `/v1/agents/${agentId}/runs`],
      ['GET', `/v1/threads?agent=${agentId}`],
      ['GET', `/v1/threads/${threadId}?agent=${agentId}`],
    ] as const) {
      const response = await call(method, path, { key: b.key });
      expect(response.status, `${method} ${path}`).to.equal(404);
    }
    expect((await call('POST', `/v1/runs/${runId}/answer`, { key: b.key, body: { answer: 'x' } })).status).to.equal(404);
    const hijack = await stream('POST', `/v1/agents/${agentId}/runs`, { key: b.key, body: { input: 'x', thread_id: threadId } });
    expect(hijack.status).to.equal(404);
  });

  it("leaves another tenant's runs, tools and threads out of every list", async () => {
    expect((await call('GET', '/v1/runs', { key: b.key })).body.runs).to.deep.equal([]);
    expect((await call('GET', '/v1/tools', { key: b.key })).body.tools).to.deep.equal([]);
    const own = await publishAgent(b.key, 'private', scriptedGraph([{ text: 'mine' }]));
    expect((await call('GET', `/v1/threads?agent=private`, { key: b.key })).body.threads).to.deep.equal([]);
    expect((await call('GET', `/v1/agents/${own}/runs`, { key: b.key })).body.runs).to.deep.equal([]);
    expect((await call('GET', '/v1/runs', { key: a.key })).body.runs.map((r: { id: string }) => r.id)).to.deep.equal([runId]);
  });

  it('lists runs in the Temporal UI by their search attributes', async () => {
    const { temporal } = testPlatform();
    const query = `TenantId = "${a.tenantId}" AND AgentId = "${agentId}" AND RunSource = "api"`;
    let ids: string[] = [];
    // Visibility is eventually consistent; give it a moment.
    for (let attempt = 0; attempt < 50 && !ids.includes(runId); attempt++) {
      ids = [];
      for await (const workflow of temporal.workflow.list({ query })) ids.push(workflow.workflowId);
      if (!ids.includes(runId)) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ids).to.deep.equal([runId]);
  });
});
