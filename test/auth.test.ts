import { expect } from 'chai';
import { call, newTenant } from './support/api.js';

describe('authentication', () => {
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  before(async () => {
    tenant = await newTenant('auth');
  });

  function expect401(response: { status: number; headers: Headers; body: any }) {
    expect(response.status).to.equal(401);
    expect(response.body.error.code).to.equal('unauthorized');
    expect(response.headers.get('www-authenticate')).to.match(/^Bearer /);
  }

  it('answers 401 without an Authorization header', async () => {
    expect401(await call('GET', '/v1/agents'));
  });

  it('answers 401 to a header that is not "Bearer <credential>"', async () => {
    expect401(await call('GET', '/v1/agents', { headers: { authorization: `Token ${tenant.key}` } }));
    expect401(await call('GET', '/v1/agents', { headers: { authorization: 'Bearer' } }));
    expect401(await call('GET', '/v1/agents', { headers: { authorization: `Bearer ${tenant.key} extra` } }));
  });

  it('answers 401 to a credential with the wrong prefix', async () => {
    expect401(await call('GET', '/v1/agents', { key: tenant.key.replace('svc_sk_', 'sk_live_') }));
  });

  it('answers 401 to an unknown key', async () => {
    expect401(await call('GET', '/v1/agents', { key: `svc_sk_${'x'.repeat(43)}` }));
  });

  it('answers 401 to a revoked key, and 200 to the same key before', async () => {
    const created = await call('POST', '/v1/api-keys', { key: tenant.key, body: { kind: 'standard' } });
    expect(created.status).to.equal(201);
    const key: string = created.body.key;
    expect((await call('GET', '/v1/agents', { key })).status).to.equal(200);

    const revoked = await call('DELETE', `/v1/api-keys/${created.body.api_key.id}`, { key: tenant.key });
    expect(revoked.body).to.deep.equal({ deleted: true, id: created.body.api_key.id });
    expect401(await call('GET', '/v1/agents', { key }));
    expect((await call('DELETE', `/v1/api-keys/${created.body.api_key.id}`, { key: tenant.key })).status).to.equal(404);
  });

  it('stores only a hash of each key', async () => {
    const { testPlatform } = await import('./support/global.js');
    const rows = await testPlatform().db.selectFrom('api_keys').select(['key_hash', 'key_prefix']).where('tenant_id', '=', tenant.tenantId).execute();
    expect(rows).to.not.be.empty;
    for (const row of rows) {
      expect(row.key_hash).to.match(/^[0-9a-f]{64}$/);
      expect(tenant.key).to.not.include(row.key_hash);
      expect(row.key_prefix.length).to.be.below(16);
    }
  });

  it('answers 403 forbidden to a standard key on management-only operations', async () => {
    const agent = await call('POST', '/v1/agents', { key: tenant.standardKey, body: { name: 'managed' } });
    expect(agent.status).to.equal(201);
    const patch = await call('PATCH', `/v1/agents/${agent.body.agent.id}`, { key: tenant.standardKey, body: { description: 'x' } });
    expect(patch.status).to.equal(403);
    expect(patch.body.error.code).to.equal('forbidden');
    expect((await call('POST', '/v1/api-keys', { key: tenant.standardKey, body: {} })).status).to.equal(403);
    expect((await call('PATCH', `/v1/agents/${agent.body.agent.id}`, { key: tenant.key, body: { description: 'x' } })).status).to.equal(200);
  });

  it('leaves health and the OpenAPI document open', async () => {
    expect((await call('GET', '/healthz')).status).to.equal(200);
    expect((await call('GET', '/openapi.json')).status).to.equal(200);
  });
});
