import { expect } from 'chai';
import { sql } from 'kysely';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';

describe('tenant isolation', () => {
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  let agentA: { id: string; name: string };

  before(async () => {
    a = await newTenant('tenant-a');
    b = await newTenant('tenant-b');
    agentA = (await call('POST', '/v1/agents', { key: a.key, body: { name: 'secret-agent' } })).body.agent;
    await call('POST', `/v1/agents/${agentA.id}/versions`, { key: a.key, body: { graph: { nodes: [{ id: 'main' }] } } });
  });

  for (const by of ['id', 'name'] as const) {
    it(`answers 404 to another tenant reading, patching or deleting an agent by ${by}`, async () => {
      const ref = encodeURIComponent(agentA[by]);
      for (const [method, path, body] of [
        ['GET', `/v1/agents/${ref}`, undefined],
        ['GET', `/v1/agents/${ref}/versions`, undefined],
        ['POST', `/v1/agents/${ref}/versions`, { graph: { nodes: [{ id: 'x' }] } }],
        ['PATCH', `/v1/agents/${ref}`, { description: 'taken over' }],
        ['DELETE', `/v1/agents/${ref}`, undefined],
      ] as const) {
        const response = await call(method, path, { key: b.key, body });
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.body.error.code).to.equal('not_found');
      }
      const stillThere = await call('GET', `/v1/agents/${agentA.id}`, { key: a.key });
      expect(stillThere.body.agent.description).to.equal(null);
    });
  }

  it("leaves another tenant's agents out of lists, and lets both use the same name", async () => {
    expect((await call('GET', '/v1/agents', { key: b.key })).body.agents).to.deep.equal([]);
    const sameName = await call('POST', '/v1/agents', { key: b.key, body: { name: 'secret-agent' } });
    expect(sameName.status).to.equal(201);
    expect(sameName.body.agent.id).to.not.equal(agentA.id);
    const listA = await call('GET', '/v1/agents', { key: a.key });
    expect(listA.body.agents.map((x: { id: string }) => x.id)).to.deep.equal([agentA.id]);
  });

  it('hides other tenants from a query that forgets its tenant filter (row-level security)', async () => {
    const { db } = testPlatform();
    // As the connection's own role the rows of both tenants are there...
    const all = await db.selectFrom('agents').select('tenant_id').where('name', '=', 'secret-agent').execute();
    expect(new Set(all.map((r) => r.tenant_id))).to.include.members([a.tenantId, b.tenantId]);
    // ...but inside a tenant transaction, the same unfiltered queries see only that tenant's rows.
    const seenByB = await withTenant(db, b.tenantId, async (tx) => ({
      agents: await tx.selectFrom('agents').select('tenant_id').execute(),
      versions: await tx.selectFrom('agent_versions').select('tenant_id').execute(),
      keys: await tx.selectFrom('api_keys').select('tenant_id').execute(),
    }));
    for (const rows of Object.values(seenByB)) {
      expect(rows.every((r) => r.tenant_id === b.tenantId)).to.equal(true);
    }
    expect(seenByB.versions).to.have.length(0);
    expect(seenByB.agents).to.have.length(1);
  });

  it("refuses to write a row into another tenant's space", async () => {
    const { db } = testPlatform();
    let error: unknown;
    try {
      await withTenant(db, b.tenantId, (tx) =>
        tx.insertInto('agents').values({ id: 'agt_intruder', tenant_id: a.tenantId, name: 'intruder', description: null }).execute(),
      );
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/row-level security/);
    const role = await withTenant(db, b.tenantId, (tx) => sql<{ bypass: boolean }>`select rolbypassrls as bypass from pg_roles where rolname = current_user`.execute(tx));
    expect(role.rows[0]?.bypass).to.equal(false);
  });

  it('fails a tenant transaction whose statement failed although its work caught the error, and writes nothing of it', async () => {
    const { db } = testPlatform();
    const name = `caught-${Date.now()}`;
    let error: unknown;
    try {
      await withTenant(db, a.tenantId, async (tx) => {
        await tx.insertInto('agents').values({ id: `agt_${name}`, tenant_id: a.tenantId, name, description: null }).execute();
        await sql`select 1 / 0`.execute(tx).catch(() => undefined);
        return 'done';
      });
    } catch (err) {
      error = err;
    }
    expect(error, 'withTenant answered as if it had committed').to.be.instanceOf(Error);
    const left = await withTenant(db, a.tenantId, (tx) => tx.selectFrom('agents').select('id').where('name', '=', name).execute());
    expect(left).to.have.length(0);
  });
});
