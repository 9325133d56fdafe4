import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Decimal } from 'decimal.js';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/** Subagents: tools of kind `agent` run another agent as a child run (docs/subagents.md). */
describe('subagents', () => {
  let key: string;
  let askHuman: string;
  before(async () => {
    ({ key } = await newTenant('subagents'));
    askHuman = await createBuiltinTool(key, 'ask_human');
  });

  const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion });
  /** scripted's prices: 1.25 USD per million prompt tokens, 2.5 per million completion tokens. */
  const price = (p: number, c: number) => new Decimal(p).times('1.25').plus(new Decimal(c).times('2.5')).dividedBy(1_000_000);

  /** A chain of three agents: `top` calls `middle` (a tool), which calls `leaf`; answers the top agent's id. */
  async function chain(prefix: string, leafScript: unknown[], leafTools: string[] = []) {
    const leaf = await publishAgent(key, `${prefix}-leaf`, scriptedGraph(leafScript, leafTools));
    const askLeaf = await createTool(key, { name: `${prefix}_leaf`, kind: 'agent', agent: { agent: `${prefix}-leaf` } });
    const middle = await publishAgent(key, `${prefix}-middle`, scriptedGraph([
      { tool_calls: [{ tool: `${prefix}_leaf`, arguments: { input: 'find the fact' } }], usage: usage(20, 2) },
      { text: 'middle says: done', usage: usage(30, 3) },
    ], [askLeaf]));
    const askMiddle = await createTool(key, { name: `${prefix}_middle`, kind: 'agent', agent: { agent: middle } });
    const top = await publishAgent(key, `${prefix}-top`, scriptedGraph([
      { tool_calls: [{ tool: `${prefix}_middle`, arguments: { input: 'research this' } }], usage: usage(100, 10) },
      { text: 'top says: all done', usage: usage(200, 20) },
    ], [askMiddle]));
    return { top, middle, leaf };
  }

  /**
   * A chain whose leaf asks `question` (its first turn using `leafUsage`), started: every run of it is
   * paused, the top run's stream ended at its run.paused (`paused`).
   */
  async function pausedChain(prefix: string, question: string, leafUsage?: ReturnType<typeof usage>) {
    const { top } = await chain(prefix, [
      { tool_calls: [{ tool: 'ask_human', arguments: { question } }], ...(leafUsage && { usage: leafUsage }) },
      { text: `${prefix}: the leaf is done` },
    ], [askHuman]);
    const response = await stream('POST', `/v1/agents/${top}/runs`, { key, body: { input: 'go' } });
    const paused = response.frames.at(-1)!;
    expect(paused.event, 'the top run pauses too').to.equal('run.paused');
    const topId = response.frames[0]!.data.run_id as string;
    const middleId = await childOf(topId);
    const leafId = await childOf(middleId);
    await waitForStatus(middleId, 'paused');
    return { topId, middleId, leafId, paused };
  }

  async function runOf(runId: string) {
    const response = await call('GET', `/v1/runs/${runId}`, { key });
    expect(response.status).to.equal(200);
    return response.body as { run: any; steps: any[] };
  }

  async function childOf(runId: string): Promise<string> {
    const children = await call('GET', `/v1/runs?parent_run_id=${runId}`, { key });
    expect(children.status).to.equal(200);
    expect(children.body.runs, `children of ${runId}`).to.have.length(1);
    return children.body.runs[0].id;
  }

  /** The replay of a run's stored history (stored just after the run closes; 409 until then). */
  async function replayed(runId: string) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await call('POST', `/v1/runs/${runId}/replay`, { key });
      if (response.status === 200) return response.body;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the history of ${runId} was never stored`);
  }

  async function waitForStatus(runId: string, status: string) {
    for (let i = 0; i < 200; i++) {
      const { run } = await runOf(runId);
      if (run.status === status) return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`run ${runId} never became ${status}`);
  }

  it('runs a chain of depth 2 as child runs whose output is the tool result, rolling their usage and cost up', async () => {
    const { top, middle, leaf } = await chain('roll', [{ text: 'the fact is 42', usage: usage(7, 1) }]);
    const response = await stream('POST', `/v1/agents/${top}/runs`, { key, body: { input: 'go' } });
    expect(response.frames.at(-1)!.event).to.equal('run.completed');
    const topId = response.frames[0]!.data.run_id as string;

    const middleId = await childOf(topId);
    const leafId = await childOf(middleId);
    const [topRun, middleRun, leafRun] = await Promise.all([runOf(topId), runOf(middleId), runOf(leafId)]);
    expect(middleRun.run).to.include({ agent_id: middle, parent_run_id: topId, depth: 1, status: 'completed', input: 'research this' });
    expect(leafRun.run).to.include({ agent_id: leaf, parent_run_id: middleId, depth: 2, status: 'completed', input: 'find the fact', output: 'the fact is 42' });
    expect(topRun.run).to.include({ parent_run_id: null, depth: 0, output: 'top says: all done' });
    expect(leafRun.run.thread_id, 'a child runs in a thread of its own').to.not.equal(topRun.run.thread_id);

    // The child's output is the tool's result, in the step and in what the next model turn was sent.
    expect(middleRun.steps[0]).to.include({ tool: 'roll_leaf', status: 'completed', result: 'the fact is 42' });
    expect(topRun.steps[0]).to.include({ tool: 'roll_middle', status: 'completed', result: 'middle says: done' });

    // Each run's totals are its own turns plus its subagents' totals; the cost likewise, exactly.
    expect(leafRun.run.usage).to.include({ prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 });
    expect(middleRun.run.usage).to.include({ prompt_tokens: 57, completion_tokens: 6, total_tokens: 63 });
    expect(topRun.run.usage).to.include({ prompt_tokens: 357, completion_tokens: 36, total_tokens: 393 });
    expect(leafRun.run.usage.cost_usd).to.equal(price(7, 1).toFixed());
    expect(new Decimal(middleRun.run.usage.cost_usd).equals(price(57, 6))).to.equal(true);
    expect(new Decimal(topRun.run.usage.cost_usd).equals(price(357, 36))).to.equal(true);
    const completed = response.frames.at(-1)!.data;
    expect(completed.usage).to.include({ total_tokens: 393, cost_usd: topRun.run.usage.cost_usd });
  });

  it("pauses every run above a subagent's ask_human, and the answer given to the top run reaches the subagent", async () => {
    const { topId, middleId, leafId, paused } = await pausedChain('ask', 'Which colour?');
    const expectedId = `${middleId}/${leafId}/q_0`;
    expect(paused.data).to.include({ question_id: expectedId, question: 'Which colour?' });
    expect((await runOf(middleId)).run.pending_question).to.include({ id: `${leafId}/q_0`, question: 'Which colour?' });
    expect((await runOf(leafId)).run.pending_question).to.include({ id: 'q_0' });

    const answered = await call('POST', `/v1/runs/${topId}/answer`, { key, body: { answer: 'teal' } });
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    expect(answered.body).to.deep.include({ run_id: topId, question_id: expectedId, status: 'running' });

    const rest = await stream('GET', `/v1/runs/${topId}/events`, { key, headers: { 'last-event-id': String(paused.id) } });
    expect(rest.frames.at(-1)!.event).to.equal('run.completed');
    expect(rest.frames[0]!.data).to.include({ question_id: expectedId, answer: 'teal' });
    const leafRun = await runOf(leafId);
    expect(leafRun.run.status).to.equal('completed');
    expect(leafRun.steps[0].result, 'the answer reached the subagent that asked').to.deep.equal({ answer: 'teal' });
    expect((await runOf(middleId)).run).to.include({ status: 'completed', pending_question: null });

    // Each run of the chain replays deterministically from its stored history.
    for (const runId of [topId, middleId, leafId]) expect((await replayed(runId)).deterministic, runId).to.equal(true);
    if (process.env.RECORD_HISTORY_FIXTURE) {
      // RECORD_HISTORY_FIXTURE=1 npm test -- --grep subagents: after an intended change of agentRun.
      // The middle run relays a question both ways; the leaf's own question is answered through its parent.
      for (const [name, runId] of [['subagent-middle', middleId], ['subagent-leaf', leafId]] as const) {
        const stored = await testPlatform().db.selectFrom('run_histories').select('history').where('run_id', '=', runId).executeTakeFirstOrThrow();
        fs.writeFileSync(path.resolve(`test/fixtures/agent-run-${name}-history.json`), JSON.stringify(stored.history, null, 1) + '\n');
      }
    }
  });

  it('resumes the runs above when the subagent itself is answered', async () => {
    const { topId, leafId } = await pausedChain('direct', 'Size?');
    const answered = await call('POST', `/v1/runs/${leafId}/answer`, { key, body: { answer: 'large' } });
    expect(answered.status).to.equal(200);
    const topRun = await waitForStatus(topId, 'completed');
    expect(topRun.pending_question).to.equal(null);
    expect((await runOf(leafId)).steps[0].result).to.deep.equal({ answer: 'large' });
    const events = await stream('GET', `/v1/runs/${topId}/events`, { key });
    const resumed = events.frames.find((f) => f.event === 'run.resumed');
    expect(resumed?.data, 'the top run shows the answer the subagent took').to.include({ answer: 'large' });
    // The question was answered once: the top run no longer takes an answer.
    expect((await call('POST', `/v1/runs/${topId}/answer`, { key, body: { answer: 'late' } })).status).to.equal(409);
  });

  it('cancelling the parent cancels its subagents, and the parent keeps what they spent', async () => {
    const { topId, middleId, leafId } = await pausedChain('cancel', 'Wait?', usage(5, 5));
    expect((await call('POST', `/v1/runs/${topId}/cancel`, { key })).status).to.equal(202);
    const topRun = await waitForStatus(topId, 'cancelled');
    expect((await runOf(middleId)).run.status).to.equal('cancelled');
    expect((await runOf(leafId)).run.status).to.equal('cancelled');
    // top 100+10, middle 20+2, leaf 5+5: the turns taken before the cancel are paid for, at every level.
    expect(topRun.usage).to.include({ prompt_tokens: 125, completion_tokens: 17 });
    expect(new Decimal(topRun.usage.cost_usd).equals(price(125, 17))).to.equal(true);
  });

  it('a subagent cancelled on its own while the runs above wait on its question: they resume, and the call fails', async () => {
    const { topId, middleId, leafId } = await pausedChain('withdraw', 'Anyone?');

    expect((await call('POST', `/v1/runs/${leafId}/cancel`, { key })).status).to.equal(202);
    const topRun = await waitForStatus(topId, 'completed');
    expect(topRun).to.include({ output: 'top says: all done', pending_question: null });
    expect((await runOf(leafId)).run.status).to.equal('cancelled');
    const middle = await runOf(middleId);
    expect(middle.run.status).to.equal('completed');
    expect(middle.steps[0]).to.include({ status: 'failed' });
    expect(middle.steps[0].error).to.match(/was cancelled/);
    // The question was withdrawn: each run above resumed with no answer.
    for (const runId of [topId, middleId]) {
      const events = await stream('GET', `/v1/runs/${runId}/events`, { key });
      const resumed = events.frames.find((f) => f.event === 'run.resumed');
      expect(resumed?.data, runId).to.include({ answer: null });
    }
  });

  for (const maxDepth of [2, undefined]) {
    const limit = maxDepth ?? 3;
    it(`bounds the depth (${maxDepth ? `max_depth ${maxDepth}` : 'default 3'}): an agent that calls itself stops there with a tool error`, async () => {
      const name = `recursive-${limit}`;
      const agent = await publishAgent(key, name, { nodes: [{ id: 'main', model: 'scripted', script: [] }] });
      const self = await createTool(key, { name: `recurse_${limit}`, kind: 'agent', agent: { agent: name, ...(maxDepth && { max_depth: maxDepth }) } });
      const version = await call('POST', `/v1/agents/${agent}/versions`, {
        key,
        body: { graph: scriptedGraph([{ tool_calls: [{ tool: `recurse_${limit}`, arguments: { input: 'again' } }] }, { text: 'bottom reached' }], [self]) },
      });
      expect(version.status).to.equal(201);
      const response = await stream('POST', `/v1/agents/${agent}/runs`, { key, body: { input: 'start' } });
      expect(response.frames.at(-1)!.event).to.equal('run.completed');
      let runId = response.frames[0]!.data.run_id as string;
      for (let level = 1; level <= limit; level++) runId = await childOf(runId);
      const deepest = await runOf(runId);
      expect(deepest.run.depth).to.equal(limit);
      expect(deepest.steps[0].status).to.equal('failed');
      expect(deepest.steps[0].error).to.match(/depth limit/);
      const none = await call('GET', `/v1/runs?parent_run_id=${runId}`, { key });
      expect(none.body.runs).to.deep.equal([]);
    });
  }

  it("reports a subagent's failure to the model as a tool error; the parent goes on", async () => {
    await publishAgent(key, 'broken', { nodes: [{ id: 'main', toolRefs: [] }] });
    const tool = await createTool(key, { name: 'broken_helper', kind: 'agent', agent: { agent: 'broken' } });
    const parent = await publishAgent(key, 'relies-on-broken', scriptedGraph([
      { tool_calls: [{ tool: 'broken_helper', arguments: { input: 'try' } }] },
      { text: 'carried on' },
    ], [tool]));
    const response = await stream('POST', `/v1/agents/${parent}/runs`, { key, body: { input: 'go' } });
    expect(response.frames.at(-1)!.event).to.equal('run.completed');
    const parentId = response.frames[0]!.data.run_id as string;
    const { steps } = await runOf(parentId);
    expect(steps[0]).to.include({ status: 'failed' });
    expect(steps[0].error).to.match(/failed: invalid graph: node 'main' has no "model"/);
    expect((await runOf(await childOf(parentId))).run.status).to.equal('failed');
  });

  it('runs a pinned version of the subagent', async () => {
    const helper = await publishAgent(key, 'versioned', scriptedGraph([{ text: 'version one' }]));
    await call('POST', `/v1/agents/${helper}/versions`, { key, body: { graph: scriptedGraph([{ text: 'version two' }]) } });
    const pinned = await createTool(key, { name: 'versioned_v1', kind: 'agent', agent: { agent: 'versioned', version: 1 } });
    const parent = await publishAgent(key, 'pins', scriptedGraph([
      { tool_calls: [{ tool: 'versioned_v1', arguments: { input: 'hi' } }] },
      { text: 'ok' },
    ], [pinned]));
    const response = await stream('POST', `/v1/agents/${parent}/runs`, { key, body: { input: 'go' } });
    const parentId = response.frames[0]!.data.run_id as string;
    expect((await runOf(parentId)).steps[0].result).to.equal('version one');
    expect((await runOf(await childOf(parentId))).run.version).to.equal(1);
  });

  describe('the tool', () => {
    it('must name an agent of the workspace: another workspace\'s agent is unknown here', async () => {
      const other = await newTenant('subagents-other');
      const foreign = await publishAgent(other.key, 'foreign', scriptedGraph([{ text: 'x' }]));
      for (const ref of [foreign, 'foreign', 'no-such-agent']) {
        const response = await call('POST', '/v1/tools', { key, body: { name: 'foreign_call', kind: 'agent', agent: { agent: ref } } });
        expect(response.status, ref).to.equal(400);
        expect(response.body.error.fields[0].field).to.equal('body.agent.agent');
      }
    });

    it('shows its settings, refuses other kinds\' settings, and can be changed', async () => {
      const shown = await publishAgent(key, 'shown', scriptedGraph([{ text: 'x' }]));
      const created = await call('POST', '/v1/tools', { key, body: { name: 'shown_call', kind: 'agent', agent: { agent: 'shown', version: 1, max_depth: 2 } } });
      expect(created.status).to.equal(201);
      expect(created.body.tool).to.include({ kind: 'agent', http: null, mcp: null, builtin: null });
      expect(created.body.tool.agent, 'kept by id').to.deep.equal({ agent: shown, version: 1, max_depth: 2 });

      const mixed = await call('POST', '/v1/tools', { key, body: { name: 'mixed', kind: 'agent', agent: { agent: 'shown' }, builtin: 'calculator' } });
      expect(mixed.status).to.equal(400);
      const missing = await call('POST', '/v1/tools', { key, body: { name: 'missing', kind: 'agent' } });
      expect(missing.status).to.equal(400);
      const tooDeep = await call('POST', '/v1/tools', { key, body: { name: 'deep', kind: 'agent', agent: { agent: 'shown', max_depth: 11 } } });
      expect(tooDeep.status).to.equal(400);

      const changed = await call('PATCH', `/v1/tools/${created.body.tool.id}`, { key, body: { agent: { agent: 'shown' } } });
      expect(changed.status).to.equal(200);
      expect(changed.body.tool.agent).to.deep.equal({ agent: shown });
      const unknown = await call('PATCH', `/v1/tools/${created.body.tool.id}`, { key, body: { agent: { agent: 'nobody' } } });
      expect(unknown.status).to.equal(400);

      // A name that exists answers that tool unchanged, even with settings that would be refused.
      const again = await call('POST', '/v1/tools', { key, body: { name: 'shown_call', kind: 'agent', agent: { agent: 'nobody' } } });
      expect(again.status).to.equal(200);
      expect(again.body.tool.agent).to.deep.equal({ agent: shown });
    });
  });
});
