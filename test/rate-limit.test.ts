import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { ApiError } from '../api/errors.js';
import { takeRateLimitToken, takeRateLimitTokenNow } from '../api/rate-limit.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { failure } from './support/failure.js';
import { testPlatform } from './support/global.js';

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

describe('rate limit window (takeRateLimitToken, takeRateLimitTokenNow)', () => {
  const limit = { bucket: 'test-window', limit: 3, windowSeconds: 60 };
  let tenantId: string;

  before(async () => {
    tenantId = (await newTenant('window')).tenantId;
  });

  const take = (keyId: string) => takeRateLimitTokenNow(testPlatform().db, tenantId, keyId, limit);
  const hits = (keyId: string) => testPlatform().db.selectFrom('rate_limit_hits').where('key_id', '=', keyId).where('bucket', '=', limit.bucket);
  const stored = async (keyId: string) => (await hits(keyId).select('at').execute()).length;
  /** Moves the key's hits back in time, as if they had been taken `seconds` earlier. */
  const age = (keyId: string, seconds: number) =>
    testPlatform().db.updateTable('rate_limit_hits').set({ at: sql`at - make_interval(secs => ${seconds})` }).where('key_id', '=', keyId).where('bucket', '=', limit.bucket).execute();

  it('counts down, refuses at the limit without counting the refusal, and forgets hits once they leave the window', async () => {
    const keyId = `key_${randomUUID()}`;
    const remaining = [];
    for (let i = 0; i < 3; i++) remaining.push((await take(keyId))['RateLimit-Remaining']);
    expect(remaining).to.deep.equal(['2', '1', '0']);
    // Refused in a transaction that goes on to commit: the refusal itself stores nothing.
    const refused = await withTenant(testPlatform().db, tenantId, (tx) => failure(takeRateLimitToken(tx, tenantId, keyId, limit)));
    expect((refused as ApiError).code).to.equal('rate_limited');
    expect(Number((refused as ApiError).headers['Retry-After'])).to.be.within(58, 60);
    expect(await stored(keyId)).to.equal(3);

    // A minute on, the window holds none of them: the next request is the first of a new one, and the old hits are gone.
    await age(keyId, 61);
    expect((await take(keyId))['RateLimit-Remaining']).to.equal('2');
    expect(await stored(keyId)).to.equal(1);
    // Half a minute on, that hit still counts, and the window resets when it leaves.
    await age(keyId, 30);
    const headers = await take(keyId);
    expect(headers['RateLimit-Remaining']).to.equal('1');
    expect(Number(headers['RateLimit-Reset'])).to.be.within(29, 31);
  });

  // On PGlite (one connection) the requests take turns; only Postgres makes them wait on the lock.
  it('lets exactly the limit through when one key sends many requests at once', async () => {
    // Many rounds: one statement per take is short, and unlocked takes would overlap only now and then.
    for (let round = 0; round < 20; round++) {
      const keyId = `key_${randomUUID()}`;
      const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => take(keyId)));
      expect(outcomes.filter((o) => o.status === 'fulfilled'), `round ${round}`).to.have.length(3);
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ApiError).code).to.equal('rate_limited');
      expect(await stored(keyId), `round ${round}`).to.equal(3);
    }
  });
});
