import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { stream, streamedText } from './support/sse.js';

describe('runs', () => {
  let key: string;
  let calculator: string;
  before(async () => {
    ({ key } = await newTenant('runs'));
    calculator = await createTool(key, { name: 'calculator', kind: 'builtin', builtin: 'calculator' });
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
