import { THREAD_HISTORY_CHARS } from '../activities/runs/plan.js';
import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { stream, streamedText } from './support/sse.js';

describe('runs', () => {
  let key: string;
  let calculator: string;
  before(async () => {
    ({ key } = await newTenant('runs'));
    calculator = await createBuiltinTool(key, 'calculator');
  });

  it('streams a scripted run with a tool call, and persists run, steps, usage and exact cost', async () => {
    const agentId = await publishAgent(
      key,
      'math',
      scriptedGraph(
        [
          { tool_calls: [{ tool: 'calculator', arguments: { expression: '2 + 3 * 4' } }], usage: { prompt_tokens: 1000, completion_tokens: 200 } },
          { text: 'The answer is 14, as computed.', usage: { prompt_tokens: 1500, completion_tokens: 300 } },
        ],
        [calculator],
      ),
    );
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'What is 2 + 3 * 4?' } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/event-stream/);
    const types = response.frames.map((f) => f.event);
    const compact = types.filter((t, i) => t !== 'message.delta' || types[i - 1] !== 'message.delta');
    expect(compact).to.deep.equal([
      'run.created',
      'run.started',
      'message.completed',
      'tool_call.started',
      'tool_call.completed',
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(response.frames.map((f) => f.id)).to.deep.equal(response.frames.map((_, i) => i + 1));
    expect(types.filter((t) => t === 'message.delta').length).to.be.greaterThan(1);
    expect(streamedText(response.frames)).to.equal('The answer is 14, as computed.');
    const runId = response.frames[0]!.data.run_id;

    const { body } = await call('GET', `/v1/runs/${runId}`, { key });
    expect(body.run).to.include({ id: runId, status: 'completed', output: 'The answer is 14, as computed.', model: 'scripted', source: 'api', input: 'What is 2 + 3 * 4?' });
    expect(body.run.usage).to.include({ prompt_tokens: 2500, completion_tokens: 500, total_tokens: 3000, cost_usd: '0.004375' });
    expect(body.run.usage.duration_ms).to.be.a('number');
    expect(body.steps).to.have.length(1);
    expect(body.steps[0]).to.include({ index: 0, tool: 'calculator', tool_id: calculator, status: 'completed', error: null });
    expect(body.steps[0].arguments).to.deep.equal({ expression: '2 + 3 * 4' });
    expect(body.steps[0].result).to.deep.equal({ result: 14 });
  });
});

describe('runs: usage, resume, graphs, threads, built-in tools', () => {
  let key: string;
  const tools: Record<string, string> = {};
  before(async () => {
    ({ key } = await newTenant('runs-more'));
    for (const builtin of ['calculator', 'plan_write', 'verify_plan', 'wait_until', 'list_skills']) {
      tools[builtin] = await createBuiltinTool(key, builtin);
    }
  });

  async function run(agentId: string, input: string, extra: Record<string, unknown> = {}) {
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input, ...extra } });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const runId: string = response.frames[0]!.data.run_id;
    return { response, runId, record: (await call('GET', `/v1/runs/${runId}`, { key })).body };
  }

  it('keeps usage null, not zero, when a turn reported none', async () => {
    const agentId = await publishAgent(key, 'no-usage', scriptedGraph([
      { tool_calls: [{ tool: 'calculator', arguments: { expression: '1+1' } }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
      { text: 'two', usage: null },
    ], [tools.calculator!]));
    const { record, response } = await run(agentId, 'one plus one');
    expect(record.run.usage).to.include({ prompt_tokens: null, completion_tokens: null, total_tokens: null, cost_usd: null });
    expect(record.run.usage.duration_ms).to.be.a('number');
    expect(response.frames.at(-1)!.data.usage.cost_usd).to.equal(null);
  });

  it('resumes a stream after Last-Event-ID with exactly the rest, live or finished', async () => {
    const agentId = await publishAgent(key, 'resumable', scriptedGraph([
      { tool_calls: [{ tool: 'calculator', arguments: { expression: '6*7' } }] },
      { text: 'forty two is the answer to it all', delay_ms: 300 },
    ], [tools.calculator!]));
    // Hang up in the middle of the live stream, then reconnect from the last id seen.
    const first = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' }, until: (f) => f.event === 'tool_call.completed' });
    const runId = first.frames[0]!.data.run_id;
    const lastSeen = first.frames.at(-1)!.id;
    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key, headers: { 'last-event-id': String(lastSeen) } });
    expect(rest.frames[0]!.id).to.equal(lastSeen + 1);
    expect(rest.frames.at(-1)!.event).to.equal('run.completed');
    const stitched = [...first.frames, ...rest.frames];
    expect(stitched.map((f) => f.id)).to.deep.equal(stitched.map((_, i) => i + 1));

    // The finished run's trace is the same data: the whole log replays, and any suffix of it.
    const all = await stream('GET', `/v1/runs/${runId}/events`, { key });
    expect(all.frames).to.deep.equal(stitched);
    const tail = await stream('GET', `/v1/runs/${runId}/events?after=${stitched.length - 2}`, { key });
    expect(tail.frames).to.deep.equal(stitched.slice(-2));
    expect(streamedText(all.frames)).to.equal('forty two is the answer to it all');
  });

  it('runs a two-node graph: the first node’s answer is the second node’s input', async () => {
    const agentId = await publishAgent(key, 'two-nodes', {
      nodes: [
        { id: 'draft', model: 'scripted', script: [{ text: 'a draft about otters' }] },
        { id: 'review', model: 'ollama/echo', system: 'You review drafts.' },
      ],
      edges: [{ from: 'draft', to: 'review' }],
    });
    const { record, response } = await run(agentId, 'write about otters');
    expect(record.run.status).to.equal('completed');
    expect(record.run.output).to.equal('saw system,user; last: "a draft about otters"');
    const completed = response.frames.filter((f) => f.event === 'message.completed').map((f) => f.data.node_id);
    expect(completed).to.deep.equal(['draft', 'review']);
    // Both nodes' turns are summed: the echo model reports 10 + 5 tokens, the scripted draft its own count.
    expect(record.run.usage.prompt_tokens).to.be.greaterThan(10);
    expect(record.run.usage.completion_tokens).to.be.greaterThan(5);
  });

  it('continues a thread: the model sees the earlier turns, and the thread lists them', async () => {
    const agentId = await publishAgent(key, 'threaded', { nodes: [{ id: 'chat', model: 'ollama/echo' }] });
    const first = await run(agentId, 'first question');
    const threadId = first.response.frames[0]!.data.thread_id;
    expect(threadId).to.match(/^thr_/);
    expect(first.record.run.output).to.equal('saw user; last: "first question"');

    const second = await run(agentId, 'second question', { thread_id: threadId });
    expect(second.record.run.thread_id).to.equal(threadId);
    expect(second.record.run.output).to.equal('saw user,assistant,user; last: "second question"');

    const other = await run(agentId, 'unrelated');
    expect(other.record.run.thread_id).to.not.equal(threadId);

    const threads = await call('GET', `/v1/threads?agent=threaded`, { key });
    expect(threads.body.threads.map((t: { thread_id: string }) => t.thread_id)).to.deep.equal([other.record.run.thread_id, threadId]);
    expect(threads.body.threads[1]).to.include({ title: 'first question', run_count: 2 });
    const detail = await call('GET', `/v1/threads/${threadId}?agent=${agentId}`, { key });
    expect(detail.body.turns.map((t: { input: string }) => t.input)).to.deep.equal(['first question', 'second question']);
    expect(detail.body.turns[1].output).to.equal(second.record.run.output);

    expect((await call('GET', '/v1/threads', { key })).status).to.equal(400);
    expect((await call('GET', '/v1/threads?agent=nobody', { key })).status).to.equal(404);
    expect((await call('GET', `/v1/threads/thr_missing?agent=${agentId}`, { key })).status).to.equal(404);
    const foreign = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'x', thread_id: 'thr_missing' } });
    expect(foreign.status).to.equal(404);
  });

  it('pages threads with a cursor that keeps its place while the threads it passed move up', async () => {
    const agentId = await publishAgent(key, 'paged-threads', { nodes: [{ id: 'chat', model: 'ollama/echo' }] });
    const oldest = (await run(agentId, 'oldest')).record.run.thread_id;
    const middle = (await run(agentId, 'middle')).record.run.thread_id;
    const newest = (await run(agentId, 'newest')).record.run.thread_id;
    const ids = (body: { threads: { thread_id: string }[] }) => body.threads.map((t) => t.thread_id);

    const first = await call('GET', `/v1/threads?agent=${agentId}&limit=2`, { key });
    expect(ids(first.body)).to.deep.equal([newest, middle]);
    // The page's last thread moves to the top: the next page still starts where the first one ended.
    await run(agentId, 'again', { thread_id: middle });
    const second = await call('GET', `/v1/threads?agent=${agentId}&limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(ids(second.body)).to.deep.equal([oldest]);
    expect(second.body.next_cursor).to.equal(null);
    expect(ids((await call('GET', `/v1/threads?agent=${agentId}`, { key })).body)).to.deep.equal([middle, newest, oldest]);

    expect(first.body.next_cursor).to.match(/^\d{16}\.thr_/);
    for (const cursor of [middle, 'not-a-cursor', '12.run_x', `${'9'.repeat(17)}.${middle}`]) {
      const refused = await call('GET', `/v1/threads?agent=${agentId}&cursor=${encodeURIComponent(cursor)}`, { key });
      expect(refused.status, cursor).to.equal(400);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field), cursor).to.deep.equal(['query.cursor']);
    }
    // Any place in the order is a cursor: the far future lists every thread, the epoch none.
    const place = (micros: string) => call('GET', `/v1/threads?agent=${agentId}&cursor=${micros}.${middle}`, { key });
    expect(ids((await place('9'.repeat(16))).body)).to.deep.equal([middle, newest, oldest]);
    expect(ids((await place('0')).body)).to.deep.equal([]);
  });

  it('keeps a plan with plan_write and verify_plan, waits durably, lists no skills on a node without any, and fails unknown tools as steps', async () => {
    const agentId = await publishAgent(key, 'planner', scriptedGraph([
      {
        tool_calls: [
          { tool: 'plan_write', arguments: { steps: [{ title: 'research', done: true }, { title: 'write' }] } },
          { tool: 'wait_until', arguments: { duration: '1s' } },
          { tool: 'verify_plan', arguments: {} },
          { tool: 'list_skills', arguments: {} },
          { tool: 'not_a_tool', arguments: {} },
        ],
      },
      { text: 'planned' },
    ], [tools.plan_write!, tools.verify_plan!, tools.wait_until!, tools.list_skills!]));
    const { record } = await run(agentId, 'plan it');
    expect(record.run.status).to.equal('completed');
    const steps = record.steps;
    expect(steps.map((s: { tool: string; status: string }) => [s.tool, s.status])).to.deep.equal([
      ['plan_write', 'completed'],
      ['wait_until', 'completed'],
      ['verify_plan', 'completed'],
      ['list_skills', 'completed'],
      ['not_a_tool', 'failed'],
    ]);
    expect(steps[1].result).to.deep.equal({ waited_ms: 1000 });
    expect(steps[1].duration_ms).to.be.at.least(900);
    expect(steps[2].result).to.deep.include({ done: ['research'], pending: ['write'], complete: false });
    expect(steps[3].result).to.deep.equal({ skills: [] });
    expect(steps[4].error).to.match(/unknown tool 'not_a_tool'/);
  });

  it(`gives a run the thread's latest turns that fit ${THREAD_HISTORY_CHARS} characters, leaving older ones out whole`, async function () {
    this.timeout(60_000);
    const agentId = await publishAgent(key, 'long-thread', { nodes: [{ id: 'chat', model: 'ollama/echo' }] });
    // The echo model answers with the run's input: each of these turns holds ~0.8 of the budget.
    const long = (label: string) => label.padEnd(Math.floor(THREAD_HISTORY_CHARS * 0.4), '.');
    const first = await run(agentId, long('first'));
    const threadId = first.response.frames[0]!.data.thread_id;
    const second = await run(agentId, long('second'), { thread_id: threadId });
    expect(second.record.run.output).to.match(/^saw user,assistant,user; last: "second/);
    const third = await run(agentId, 'third', { thread_id: threadId });
    expect(third.record.run.status).to.equal('completed');
    expect(third.record.run.output, 'the first turn left out').to.equal('saw user,assistant,user; last: "third"');
    const fourth = await run(agentId, 'fourth', { thread_id: threadId });
    expect(fourth.record.run.output, 'the second and third turns').to.equal('saw user,assistant,user,assistant,user; last: "fourth"');
  });

  it('fails a run whose graph cannot run, with the reason on the record', async () => {
    const agentId = await publishAgent(key, 'broken', { nodes: [{ id: 'main', toolRefs: [] }] });
    const { record, response } = await run(agentId, 'hello');
    expect(response.frames.at(-1)!.event).to.equal('run.failed');
    expect(record.run.status).to.equal('failed');
    expect(record.run.error.code).to.equal('invalid_graph');
    expect(record.run.error.message).to.match(/no "model"/);
  });

  it('fails a run whose edges form a cycle, fork, or name a missing node, saying which', async () => {
    const node = (id: string) => ({ id, model: 'scripted', script: ['done'], toolRefs: [] });
    const cases = [
      { edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'b' }], reason: /the edges form a cycle through node 'b'/ },
      { edges: [{ from: 'a', to: 'b' }, { from: 'a', to: 'c' }], reason: /node 'a' has more than one outgoing edge/ },
      { edges: [{ from: 'a', to: 'z' }], reason: /edge a → z names a node that does not exist/ },
    ];
    for (const [i, { edges, reason }] of cases.entries()) {
      const agentId = await publishAgent(key, `edges-${i}`, { entry: 'a', nodes: ['a', 'b', 'c'].map(node), edges });
      const { record } = await run(agentId, 'hello');
      expect(record.run.error, `case ${i}`).to.include({ code: 'invalid_graph' });
      expect(record.run.error.message, `case ${i}`).to.match(reason);
    }
  });

  it('fails a node that never stops calling tools after max_turns', async () => {
    const call1 = { tool_calls: [{ tool: 'calculator', arguments: { expression: '1' } }] };
    const agentId = await publishAgent(key, 'loopy', scriptedGraph([call1, call1, call1], [tools.calculator!], { max_turns: 2 }));
    const { record } = await run(agentId, 'loop');
    expect(record.run.error).to.deep.include({ code: 'max_turns_exceeded' });
    expect(record.steps).to.have.length(2);
  });

  describe('refusals', () => {
    it('answers 404 for an unknown agent, 409 without a published version, 400 for bad input', async () => {
      expect((await stream('POST', '/v1/agents/nobody/runs', { key, body: { input: 'hi' } })).status).to.equal(404);
      const draftOnly = (await call('POST', '/v1/agents', { key, body: { name: 'draft-only' } })).body.agent.id;
      await call('POST', `/v1/agents/${draftOnly}/versions`, { key, body: { graph: scriptedGraph([{ text: 'x' }]), publish: false } });
      const unpublished = await stream('POST', `/v1/agents/${draftOnly}/runs`, { key, body: { input: 'hi' } });
      expect(unpublished.status).to.equal(409);
      expect(unpublished.body.error.code).to.equal('conflict');
      for (const body of [{}, { input: '' }, { input: 3 }, { input: 'x', extra: true }]) {
        const response = await call('POST', `/v1/agents/${draftOnly}/runs`, { key, body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('GET', '/v1/runs?limit=0', { key })).status).to.equal(400);
      expect((await call('GET', '/v1/runs/run_missing', { key })).status).to.equal(404);
      expect((await call('GET', '/v1/runs/run_missing/events', { key })).status).to.equal(404);
    });
  });

  it('lists runs most recent first, by agent, with eval runs only on request', async () => {
    const agentId = await publishAgent(key, 'listed', scriptedGraph([{ text: 'ok' }]));
    const a = await run(agentId, 'one');
    const b = await run(agentId, 'two');
    const byAgent = await call('GET', `/v1/agents/${agentId}/runs`, { key });
    expect(byAgent.body.runs.map((r: { id: string }) => r.id)).to.deep.equal([b.runId, a.runId]);
    const filtered = await call('GET', `/v1/runs?agent=listed&limit=1`, { key });
    expect(filtered.body.runs.map((r: { id: string }) => r.id)).to.deep.equal([b.runId]);
    const next = await call('GET', `/v1/runs?agent=listed&limit=1&cursor=${filtered.body.next_cursor}`, { key });
    expect(next.body.runs.map((r: { id: string }) => r.id)).to.deep.equal([a.runId]);
    const all = await call('GET', '/v1/runs?limit=200', { key });
    expect(all.body.runs.every((r: { source: string }) => r.source !== 'eval')).to.equal(true);
    expect((await call('GET', '/v1/runs?source=eval', { key })).body.runs).to.deep.equal([]);
    expect((await call('GET', '/v1/runs?source=bogus', { key })).status).to.equal(400);
  });

  it('answers an empty list, not 404, for an agent filter that names no agent (the spec: 200 and 401 only)', async () => {
    const unknown = await call('GET', '/v1/runs?agent=nobody-at-all', { key });
    expect(unknown.status).to.equal(200);
    expect(unknown.body).to.deep.equal({ runs: [], next_cursor: null });
    expect((await call('GET', '/v1/runs?agent=agt_missing&source=all', { key })).body.runs).to.deep.equal([]);
    // An agent in the path is an address, and still a 404.
    expect((await call('GET', '/v1/agents/nobody-at-all/runs', { key })).status).to.equal(404);
  });
});
