import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { preparedQuery } from '../db/prepared-query.js';
import { readAsTenant } from '../db/tenant-reads.js';
import type { TenantScoped } from '../db/tenant-transaction.js';
import { call, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { tenantsWithAgents } from './support/tenants-with-agents.js';

/** db/tenant-reads.ts: reads as one tenant outside a transaction, on connections that keep their tenant. */
describe('tenant reads', () => {
  let a: TestTenant;
  let b: TestTenant;

  before(async () => {
    ({ a, b } = await tenantsWithAgents('reads', { a: ['a-1', 'a-2'], b: ['b-1'] }));
  });

  /** The agents a query without a tenant filter finds when reading as `tenant`: row-level security alone scopes it. */
  const unfilteredAgents = (tenant: TestTenant) =>
    readAsTenant(testPlatform().db, tenant.tenantId, (reader) => reader.selectFrom('agents').select(['tenant_id', 'name']).orderBy('name').execute());

  it('sees only its tenant, read after read and side by side, on connections that served the other tenant', async () => {
    for (let i = 0; i < 6; i++) {
      const tenant = i % 2 === 0 ? a : b;
      const rows = await unfilteredAgents(tenant);
      expect(rows.map((row) => row.name)).to.deep.equal(tenant === a ? ['a-1', 'a-2'] : ['b-1']);
    }
    // More reads at once than the pool has connections, the tenants interleaved.
    const tenants = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? b : a));
    const results = await Promise.all(tenants.map((tenant) => unfilteredAgents(tenant)));
    results.forEach((rows, i) => {
      expect(rows.length, `read ${i}`).to.be.greaterThan(0);
      expect(rows.every((row) => row.tenant_id === tenants[i]!.tenantId), `read ${i} saw another tenant`).to.equal(true);
    });
  });

  it("keeps each connection's tenant across both paths: Kysely reads and prepared (direct) reads interleaved", async () => {
    const unfilteredPrepared = preparedQuery((db, _values: Record<string, never>) => db.selectFrom('agents').select(['tenant_id', 'name']).orderBy('name'));
    const reads = Array.from({ length: 60 }, (_, i) => {
      const tenant = i % 3 === 0 ? b : a;
      const read = i % 2 === 0 ? unfilteredAgents(tenant) : readAsTenant(testPlatform().db, tenant.tenantId, (reader) => unfilteredPrepared.execute(reader, {}));
      return read.then((rows) => ({ tenant, rows }));
    });
    for (const [i, { tenant, rows }] of (await Promise.all(reads)).entries()) {
      expect(rows.length, `read ${i}`).to.be.greaterThan(0);
      expect(rows.every((row) => row.tenant_id === tenant.tenantId), `read ${i} saw another tenant`).to.equal(true);
    }
    // A prepared read outside readAsTenant, on a reader kept from one, is refused as a Kysely read is.
    let kept: TenantScoped | undefined;
    await readAsTenant(testPlatform().db, a.tenantId, async (reader) => {
      kept = reader;
    });
    const late = await unfilteredPrepared.execute(kept!, {}).then(
      () => 'answered',
      (err: unknown) => String(err),
    );
    // On PGlite the reader is the read's transaction, over by now.
    expect(late).to.match(testPlatform().databaseKind === 'postgres' ? /outside readAsTenant/ : /already committed/);
  });

  it('refuses to write or to lock rows, and leaves the data as it was', async () => {
    const { db } = testPlatform();
    const attempts: Array<(reader: TenantScoped) => Promise<unknown>> = [
      (reader) => reader.insertInto('agents').values({ id: 'agt_read_write', tenant_id: a.tenantId, name: 'written-by-a-read', description: null }).execute(),
      (reader) => reader.updateTable('agents').set({ description: 'changed by a read' }).where('tenant_id', '=', a.tenantId).execute(),
      (reader) => reader.selectFrom('agents').select('id').where('tenant_id', '=', a.tenantId).forUpdate().execute(),
    ];
    for (const attempt of attempts) {
      const error = await readAsTenant(db, a.tenantId, attempt).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(String(error)).to.match(/read-only transaction/);
    }
    const rows = await unfilteredAgents(a);
    expect(rows.map((row) => row.name)).to.deep.equal(['a-1', 'a-2']);
    const listed = await call('GET', '/v1/agents', { key: a.key });
    expect(listed.body.agents.map((agent: { description: string | null }) => agent.description)).to.deep.equal([null, null]);
  });

  it('refuses its reader once the read is over, and refuses transactions on it', async () => {
    const { db } = testPlatform();
    let kept: TenantScoped | undefined;
    await readAsTenant(db, a.tenantId, async (reader) => {
      kept = reader;
    });
    const late = await kept!.selectFrom('agents').select('name').execute().then(
      () => 'answered',
      () => 'refused',
    );
    expect(late).to.equal('refused');
    const nested = await readAsTenant(db, a.tenantId, (reader) => reader.transaction().execute(async () => 'ran')).then(
      () => 'ran',
      () => 'refused',
    );
    expect(nested).to.equal('refused');
  });

  it('costs one statement per read for the tenant its connection last read as (Postgres)', async function () {
    if (testPlatform().databaseKind !== 'postgres') {
      console.log('      (skipped on embedded PGlite: one in-process connection, no round trips; a read there is a read-only transaction)');
      this.skip();
    }
    const statements: string[] = [];
    const query = pg.Client.prototype.query;
    const recording = function (this: pg.Client, ...args: unknown[]) {
      const [first] = args;
      const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
      if (text?.includes('"agents"') || text?.includes('app.tenant_id')) statements.push(text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    pg.Client.prototype.query = recording;
    try {
      await unfilteredAgents(a);
      statements.length = 0;
      for (let i = 0; i < 5; i++) await unfilteredAgents(a);
      expect(statements.filter((text) => text.includes('app.tenant_id')), 'the same tenant was set again').to.deep.equal([]);
      expect(statements).to.have.length(5);
      statements.length = 0;
      await unfilteredAgents(b);
      expect(statements.filter((text) => text.includes('app.tenant_id')), 'the other tenant was not set').to.have.length(1);
      expect(statements).to.have.length(2);
    } finally {
      pg.Client.prototype.query = query;
    }
    const rows = await sql<{ role: string }>`select current_user as role`.execute(testPlatform().db);
    expect(rows.rows[0]!.role).to.not.equal('agent_platform_tenant');
  });
});
