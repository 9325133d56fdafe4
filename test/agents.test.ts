import { expect } from 'chai';
import { call, newTenant } from './support/api.js';

describe('agents', () => {
  let key: string;
  beforeEach(async () => {
    ({ key } = await newTenant('agents'));
  });

  it('creates with 201, and answers 200 with the existing agent when the name exists', async () => {
    const first = await call('POST', '/v1/agents', { key, body: { name: 'support', description: 'answers tickets' } });
    expect(first.status).to.equal(201);
    expect(first.body.created).to.equal(true);
    expect(first.body.agent).to.include({ name: 'support', description: 'answers tickets', published_version: null });
    expect(first.body.agent.id).to.match(/^agt_[0-9A-Z]{26}$/);

    const again = await call('POST', '/v1/agents', { key, body: { name: 'support', description: 'ignored' } });
    expect(again.status).to.equal(200);
    expect(again.body.created).to.equal(false);
    expect(again.body.agent).to.deep.equal(first.body.agent);
  });

  it('addresses an agent by id or by name', async () => {
    const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'by ref' } })).body;
    expect((await call('GET', `/v1/agents/${agent.id}`, { key })).body.agent.id).to.equal(agent.id);
    expect((await call('GET', `/v1/agents/${encodeURIComponent('by ref')}`, { key })).body.agent.id).to.equal(agent.id);
    expect((await call('GET', '/v1/agents/nope', { key })).status).to.equal(404);
  });

  it('finds an existing agent by its name alone when creating, even a name that spells another agent’s id', async () => {
    const first = (await call('POST', '/v1/agents', { key, body: { name: 'first' } })).body.agent;
    const second = (await call('POST', '/v1/agents', { key, body: { name: first.id } })).body.agent;
    const again = await call('POST', '/v1/agents', { key, body: { name: first.id } });
    expect(again.status).to.equal(200);
    expect(again.body.agent).to.deep.equal(second);
    // As a ref, the id wins (docs/decisions.md, "Names as references").
    expect((await call('GET', `/v1/agents/${first.id}`, { key })).body.agent.id).to.equal(first.id);
  });

  it('renames and re-describes with PATCH, and answers 409 when the new name is taken', async () => {
    const one = (await call('POST', '/v1/agents', { key, body: { name: 'one' } })).body.agent;
    await call('POST', '/v1/agents', { key, body: { name: 'two' } });

    const renamed = await call('PATCH', `/v1/agents/${one.id}`, { key, body: { name: 'uno', description: 'first' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.agent).to.include({ id: one.id, name: 'uno', description: 'first' });
    expect((await call('GET', '/v1/agents/one', { key })).status).to.equal(404);

    const cleared = await call('PATCH', '/v1/agents/uno', { key, body: { description: null } });
    expect(cleared.body.agent.description).to.equal(null);

    const conflict = await call('PATCH', '/v1/agents/uno', { key, body: { name: 'two' } });
    expect(conflict.status).to.equal(409);
    expect(conflict.body.error.code).to.equal('conflict');
    expect((await call('GET', `/v1/agents/${one.id}`, { key })).body.agent.name).to.equal('uno');
  });

  it('deletes an agent with its versions', async () => {
    const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'doomed' } })).body;
    await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: { nodes: [{ id: 'n' }] } } });
    const deleted = await call('DELETE', '/v1/agents/doomed', { key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: agent.id });
    expect((await call('GET', `/v1/agents/${agent.id}/versions`, { key })).status).to.equal(404);
    expect((await call('DELETE', `/v1/agents/${agent.id}`, { key })).status).to.equal(404);
  });

  it('pages through the list with limit and next_cursor', async () => {
    for (const name of ['a', 'b', 'c']) await call('POST', '/v1/agents', { key, body: { name } });
    const first = await call('GET', '/v1/agents?limit=2', { key });
    expect(first.body.agents.map((a: { name: string }) => a.name)).to.deep.equal(['a', 'b']);
    const second = await call('GET', `/v1/agents?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.agents.map((a: { name: string }) => a.name)).to.deep.equal(['c']);
    expect(second.body.next_cursor).to.equal(null);
    expect((await call('GET', '/v1/agents?limit=0', { key })).status).to.equal(400);
    expect((await call('GET', '/v1/agents?limit=201', { key })).status).to.equal(400);
  });

  describe('versions', () => {
    const graph = (label: string) => ({ nodes: [{ id: 'main', toolRefs: ['tool_1'], prompt: label }], edges: [] });

    it('publishes by default, archiving the previous published version', async () => {
      const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'versioned' } })).body;
      const v1 = await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph('v1') } });
      expect(v1.status).to.equal(201);
      expect(v1.body.version).to.include({ agent_id: agent.id, version: 1, status: 'published', published: true });
      expect(v1.body.version.version_id).to.match(/^ver_/);
      const v2 = await call('POST', `/v1/agents/versioned/versions`, { key, body: { graph: graph('v2'), publish: true } });
      expect(v2.body.version).to.include({ version: 2, published: true });

      const listed = await call('GET', `/v1/agents/${agent.id}/versions`, { key });
      expect(listed.body).to.include({ agent_id: agent.id, version: 2, status: 'published', published: true });
      expect(listed.body.graph).to.deep.equal(graph('v2'));
      expect(listed.body.versions.map((v: { version: number; status: string }) => [v.version, v.status])).to.deep.equal([
        [2, 'published'],
        [1, 'archived'],
      ]);
      expect((await call('GET', `/v1/agents/${agent.id}`, { key })).body.agent.published_version).to.equal(2);
    });

    it('keeps the published version current when a draft is added', async () => {
      const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'drafty' } })).body;
      await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph('live') } });
      const draft = await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph('wip'), publish: false } });
      expect(draft.body.version).to.include({ version: 2, status: 'draft', published: false });

      const listed = await call('GET', `/v1/agents/${agent.id}/versions`, { key });
      expect(listed.body).to.include({ version: 1, published: true });
      expect(listed.body.graph.nodes[0].prompt).to.equal('live');
      expect((await call('GET', `/v1/agents/${agent.id}`, { key })).body.agent.published_version).to.equal(1);
    });

    it('makes the latest draft current when nothing is published', async () => {
      const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'unpublished' } })).body;
      const empty = await call('GET', `/v1/agents/${agent.id}/versions`, { key });
      expect(empty.body).to.include({ version: null, graph: null, published: false });
      await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph('d1'), publish: false } });
      await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph('d2'), publish: false } });
      const listed = await call('GET', `/v1/agents/${agent.id}/versions`, { key });
      expect(listed.body).to.include({ version: 2, status: 'draft', published: false });
      expect(listed.body.graph.nodes[0].prompt).to.equal('d2');
    });

    it('numbers concurrent versions one after another, with exactly one published', async () => {
      const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'busy' } })).body;
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: graph(`c${i}`) } })),
      );
      expect(responses.map((r) => r.status)).to.deep.equal(Array(6).fill(201));
      expect(responses.map((r) => r.body.version.version).sort()).to.deep.equal([1, 2, 3, 4, 5, 6]);
      const listed = await call('GET', `/v1/agents/${agent.id}/versions`, { key });
      expect(listed.body.versions.filter((v: { published: boolean }) => v.published)).to.have.length(1);
    });

    it('fills toolRefs with [] and rejects graphs without nodes or with duplicate node ids', async () => {
      const { agent } = (await call('POST', '/v1/agents', { key, body: { name: 'graphs' } })).body;
      const created = await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: { nodes: [{ id: 'a' }] } } });
      expect(created.body.version.graph.nodes[0].toolRefs).to.deep.equal([]);
      for (const bad of [{}, { nodes: [] }, { nodes: [{ toolRefs: [] }] }, { nodes: [{ id: 'a', toolRefs: 'x' }] }, { nodes: [{ id: 'a' }, { id: 'a' }] }]) {
        const response = await call('POST', `/v1/agents/${agent.id}/versions`, { key, body: { graph: bad } });
        expect(response.status, JSON.stringify(bad)).to.equal(400);
        expect(response.body.error.fields).to.not.be.empty;
      }
    });
  });

  describe('request checks', () => {
    it('rejects unknown fields with 400 naming them', async () => {
      const response = await call('POST', '/v1/agents', { key, body: { name: 'x', owner: 'me', admin: true } });
      expect(response.status).to.equal(400);
      expect(response.body.error.code).to.equal('invalid_request');
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).to.have.members(['body.owner', 'body.admin']);
      expect(response.body.error.message).to.include('owner');
      expect((await call('GET', '/v1/agents', { key })).body.agents).to.deep.equal([]);
    });

    it('rejects a missing or mistyped required field with 400', async () => {
      const missing = await call('POST', '/v1/agents', { key, body: { description: 'no name' } });
      expect(missing.status).to.equal(400);
      expect(missing.body.error.fields).to.deep.equal([{ field: 'body.name', message: 'is required' }]);
      expect((await call('POST', '/v1/agents', { key, body: { name: 42 } })).status).to.equal(400);
      expect((await call('POST', '/v1/agents', { key })).status).to.equal(400);
    });

    it('answers 400 to malformed JSON', async () => {
      const response = await call('POST', '/v1/agents', { key, rawBody: '{"name": "x",' });
      expect(response.status).to.equal(400);
      expect(response.body.error.message).to.match(/malformed JSON/);
    });

    it('answers 413 to a JSON body over 1 MB, and nothing is written', async () => {
      const response = await call('POST', '/v1/agents', { key, body: { name: 'big', description: 'x'.repeat(1024 * 1024) } });
      expect(response.status).to.equal(413);
      expect(response.body.error.code).to.equal('payload_too_large');
      expect((await call('GET', '/v1/agents/big', { key })).status).to.equal(404);
    });

    it('answers 415 to a body that is not JSON', async () => {
      const response = await call('POST', '/v1/agents', { key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(response.status).to.equal(415);
    });

    it('answers unknown routes with a JSON 404 and every response with X-Request-Id', async () => {
      const response = await call('GET', '/v1/nowhere', { key });
      expect(response.status).to.equal(404);
      expect(response.body.error.code).to.equal('not_found');
      expect(response.headers.get('x-request-id')).to.match(/^req_/);
      const echoed = await call('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
      expect(echoed.headers.get('x-request-id')).to.equal('trace-123');
    });
  });
});
