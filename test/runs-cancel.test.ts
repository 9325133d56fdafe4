import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { stream } from './support/sse.js';

describe('runs: cancel', () => {
  let key: string;
  before(async () => {
    ({ key } = await newTenant('cancel'));
  });

  it('cancels during a slow model turn: the model call is aborted and the run ends cancelled', async () => {
    const slowText = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const agentId = await publishAgent(key, 'slow', scriptedGraph([{ text: slowText, delay_ms: 30_000 }]));
    let cancelledAt = 0;
    let runId = '';
    const started = Date.now();
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, {
      key,
      body: { input: 'take your time' },
      onFrame: async (frame) => {
        if (frame.event === 'run.created') runId = frame.data.run_id;
        if (frame.event === 'message.delta' && !cancelledAt) {
          cancelledAt = Date.now();
          const cancel = await call('POST', `/v1/runs/${runId}/cancel`, { key });
          expect(cancel.status).to.equal(202);
          expect(cancel.body).to.deep.equal({ run_id: runId, status: 'cancelling' });
        }
      },
    });
    const events = response.frames.map((f) => f.event);
    expect(events.at(-1)).to.equal('run.cancelled');
    expect(events).to.not.include('message.completed');
    // The 30 s turn stopped within seconds of the cancel, so the model call was aborted, not waited out.
    expect(Date.now() - started).to.be.below(15_000);
    const deltasAfterCancel = response.frames.filter((f) => f.event === 'message.delta').length;
    expect(deltasAfterCancel).to.be.below(10);

    const { body } = await call('GET', `/v1/runs/${runId}`, { key });
    expect(body.run.status).to.equal('cancelled');
    expect(body.run.ended_at).to.be.a('string');
    expect((await call('POST', `/v1/runs/${runId}/cancel`, { key })).status).to.equal(409);
  });
});
