import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testWorkerPool } from './support/global.js';
import { stream } from './support/sse.js';

describe('runs: ask_human', () => {
  let key: string;
  let agentId: string;
  before(async () => {
    ({ key } = await newTenant('human'));
    const askHuman = await createBuiltinTool(key, 'ask_human');
    agentId = await publishAgent(key, 'asker', scriptedGraph([
      { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] },
      { text: 'Noted your colour.' },
    ], [askHuman]));
  });

  async function startPaused() {
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'pick a colour' } });
    const last = response.frames.at(-1)!;
    expect(last.event, 'the stream ends at the pause').to.equal('run.paused');
    expect(last.data).to.include({ question_id: 'q_0', question: 'Which colour?' });
    return { runId: response.frames[0]!.data.run_id as string, lastId: last.id };
  }

  it('pauses with the question on the run, takes one answer, and continues from the same state', async () => {
    const { runId, lastId } = await startPaused();
    const paused = (await call('GET', `/v1/runs/${runId}`, { key })).body;
    expect(paused.run.status).to.equal('paused');
    expect(paused.run.pending_question).to.include({ id: 'q_0', question: 'Which colour?' });
    expect(paused.steps[0]).to.include({ tool: 'ask_human', status: 'running' });

    const wrongQuestion = await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'red', question_id: 'q_9' } });
    expect(wrongQuestion.status).to.equal(409);

    const answered = await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'blue' } });
    expect(answered.status).to.equal(200);
    expect(answered.body).to.deep.equal({ run_id: runId, question_id: 'q_0', status: 'running' });

    const again = await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'green' } });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('conflict');

    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key, headers: { 'last-event-id': String(lastId) } });
    expect(rest.frames[0]).to.deep.include({ event: 'run.resumed' });
    expect(rest.frames[0]!.data).to.include({ question_id: 'q_0', answer: 'blue' });
    expect(rest.frames.at(-1)!.event).to.equal('run.completed');

    const done = (await call('GET', `/v1/runs/${runId}`, { key })).body;
    expect(done.run).to.include({ status: 'completed', output: 'Noted your colour.', pending_question: null });
    expect(done.steps[0]).to.include({ status: 'completed' });
    expect(done.steps[0].result).to.deep.equal({ answer: 'blue' });
    expect((await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'late' } })).status).to.equal(409);
  });

  it('stays paused across a worker restart and continues when answered', async () => {
    const { runId } = await startPaused();
    await testWorkerPool().stop();
    await testWorkerPool().start();
    expect((await call('GET', `/v1/runs/${runId}`, { key })).body.run.status).to.equal('paused');
    const answered = await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'teal' } });
    expect(answered.status).to.equal(200);
    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key });
    expect(rest.frames.at(-1)!.event).to.equal('run.completed');
    expect((await call('GET', `/v1/runs/${runId}`, { key })).body.steps[0].result).to.deep.equal({ answer: 'teal' });
  });

  it('keeps a waiting stream open with ping comments', async () => {
    const { runId, lastId } = await startPaused();
    process.env.SSE_PING_INTERVAL_MS = '100';
    try {
      const waiting = await stream('GET', `/v1/runs/${runId}/events`, { key, headers: { 'last-event-id': String(lastId) }, hangUpAfterMs: 550 });
      expect(waiting.frames).to.deep.equal([]);
      expect(waiting.pings).to.be.at.least(2);
    } finally {
      delete process.env.SSE_PING_INTERVAL_MS;
    }
    await call('POST', `/v1/runs/${runId}/cancel`, { key });
  });

  it('can be cancelled while paused', async () => {
    const { runId, lastId } = await startPaused();
    expect((await call('POST', `/v1/runs/${runId}/cancel`, { key })).status).to.equal(202);
    // Following on from the pause, the stream waits for what comes next.
    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key, headers: { 'last-event-id': String(lastId) } });
    expect(rest.frames.at(-1)!.event).to.equal('run.cancelled');
    expect((await call('GET', `/v1/runs/${runId}`, { key })).body.run).to.include({ status: 'cancelled', pending_question: null });
    expect((await call('POST', `/v1/runs/${runId}/answer`, { key, body: { answer: 'x' } })).status).to.equal(409);
  });
});
