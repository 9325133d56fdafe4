import { expect } from 'chai';
import { call, newTenant } from './support/api.js';

describe('run rate limit', () => {
  it('takes 60 run requests per 60 s per key, and answers the 61st with 429 and Retry-After', async () => {
    const { key, standardKey } = await newTenant('limited');
    // No published version: every request is counted and answered 409 without starting a run.
    const agent = (await call('POST', '/v1/agents', { key, body: { name: 'unpublished' } })).body.agent.id;
    let last;
    for (let i = 0; i < 60; i++) {
      last = await call('POST', `/v1/agents/${agent}/runs`, { key, body: { input: `try ${i}` } });
      expect(last.status, `request ${i + 1}`).to.equal(409);
    }
    const limited = await call('POST', `/v1/agents/${agent}/runs`, { key, body: { input: 'one too many' } });
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(limited.headers.get('ratelimit-limit')).to.equal('60');
    expect(limited.headers.get('ratelimit-remaining')).to.equal('0');
    expect(limited.headers.get('ratelimit-policy')).to.equal('60;w=60');

    // Per key: the workspace's other key still gets through, and other endpoints are not limited.
    expect((await call('POST', `/v1/agents/${agent}/runs`, { key: standardKey, body: { input: 'other key' } })).status).to.equal(409);
    expect((await call('GET', '/v1/agents', { key })).status).to.equal(200);
  });
});
