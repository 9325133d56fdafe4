import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { ALLOWED_TOOL_HOST, testWorkerPool } from './support/global.js';
import { stream, streamedText, type SseFrame } from './support/sse.js';
import { sendJson, startToolServer } from './support/tool-http-server.js';

/**
 * A worker process killed with SIGKILL mid-activity, then a new one started: Temporal retries the
 * activity on it (after the 5 s heartbeat timeout), and the run completes with every step and event once.
 * These need the worker in a process of its own, which needs Postgres (embedded PGlite belongs to the
 * test process): `npm test` with DATABASE_URL runs them, as CI does.
 */
describe('runs: worker crashes', function () {
  this.timeout(90_000);
  let key: string;

  before(function () {
    if (!testWorkerPool().separateProcess) {
      console.log('      (skipped on embedded PGlite: killing a worker needs it in its own process, which needs DATABASE_URL)');
      this.skip();
    }
  });
  beforeEach(async () => {
    ({ key } = await newTenant('crash'));
  });

  async function killWorkerWhen(agentId: string, condition: (frame: SseFrame) => boolean, beforeKill?: () => Promise<void>) {
    const first = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' }, until: condition });
    await beforeKill?.();
    await testWorkerPool().stop(); // SIGKILL
    await testWorkerPool().start();
    const runId: string = first.frames[0]!.data.run_id;
    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key, headers: { 'last-event-id': String(first.frames.at(-1)!.id) } });
    return { runId, frames: [...first.frames, ...rest.frames] };
  }

  it('completes a run whose worker died during a slow model turn, resetting the partial text', async () => {
    const text = Array.from({ length: 20 }, (_, i) => `token${i}`).join(' ');
    const agentId = await publishAgent(key, 'slow-model', scriptedGraph([{ text, delay_ms: 4000 }]));
    const { runId, frames } = await killWorkerWhen(agentId, (f) => f.event === 'message.delta');

    const events = frames.map((f) => f.event);
    expect(events.at(-1)).to.equal('run.completed');
    expect(events).to.include('attempt.reset');
    expect(events.filter((e) => e === 'message.completed')).to.have.length(1);
    expect(frames.map((f) => f.id)).to.deep.equal(frames.map((_, i) => i + 1));
    // A client that drops the text before attempt.reset shows the answer exactly once.
    expect(streamedText(frames)).to.equal(text);
    expect((await call('GET', `/v1/runs/${runId}`, { key })).body.run).to.include({ status: 'completed', output: text });
  });

  it('completes a run whose worker died during a tool call, with the step recorded once', async () => {
    const server = await startToolServer((_request, res) => {
      setTimeout(() => sendJson(res, 200, { temperature: 21 }), 2500);
    }, ALLOWED_TOOL_HOST);
    const hits = server.requests;
    try {
      const weather = await createTool(key, {
        name: 'weather',
        kind: 'http',
        http: { method: 'GET', url: `${server.origin}/weather/{city}`, arguments_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      });
      const agentId = await publishAgent(key, 'slow-tool', scriptedGraph([
        { tool_calls: [{ tool: 'weather', arguments: { city: 'Oslo' } }] },
        { text: 'It is 21 degrees.' },
      ], [weather]));
      // Killed while the tool's HTTP request is in flight.
      const requestArrived = async () => {
        while (hits.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      const { runId, frames } = await killWorkerWhen(agentId, (f) => f.event === 'tool_call.started', requestArrived);

      const events = frames.map((f) => f.event);
      expect(events.at(-1)).to.equal('run.completed');
      expect(events.filter((e) => e === 'tool_call.started')).to.have.length(1);
      expect(events.filter((e) => e === 'tool_call.completed')).to.have.length(1);
      const { body } = await call('GET', `/v1/runs/${runId}`, { key });
      expect(body.steps).to.have.length(1);
      expect(body.steps[0]).to.include({ tool: 'weather', status: 'completed' });
      expect(body.steps[0].result).to.deep.equal({ temperature: 21 });
      // At-least-once: the interrupted call was made again by the new worker.
      expect(hits.length).to.equal(2);
    } finally {
      await server.close();
    }
  });
});
