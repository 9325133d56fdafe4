import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { tenantStatement, tenantStatements } from '../db/tenant-statement.js';
import { TENANT_ROLE, type TenantScoped } from '../db/tenant-transaction.js';
import type { TestTenant } from './support/api.js';
import { failure } from './support/failure.js';
import { testPlatform } from './support/global.js';
import { tenantsWithAgents } from './support/tenants-with-agents.js';

/** db/tenant-statement.ts: statements as one tenant in one transaction, with the settings, in one round trip on Postgres. */
describe('tenant statements', () => {
  let a: TestTenant;
  let b: TestTenant;

  before(async () => {
    ({ a, b } = await tenantsWithAgents('statement', { a: ['a-1', 'a-2'], b: ['b-1'] }));
  });

  /** The agents a statement without a tenant filter finds as `tenant`: row-level security alone scopes it. */
  const unfilteredAgents = (tenant: TestTenant) =>
    tenantStatement(testPlatform().db, tenant.tenantId, (scope) => scope.selectFrom('agents').select(['tenant_id', 'name']).orderBy('name').compile());

  /** Who each of `count` connections of the main pool is, taken at once so that they are distinct connections. */
  const poolSessions = async (count: number) => {
    const { db } = testPlatform();
    return Promise.all(
      Array.from({ length: count }, () =>
        sql<{ role: string; tenant: string | null }>`select current_user as role, nullif(current_setting('app.tenant_id', true), '') as tenant, pg_sleep(0.02)`
          .execute(db)
          .then((result) => result.rows[0]!),
      ),
    );
  };

  it('sees only its tenant, statement after statement and many at once, the tenants interleaved', async () => {
    for (let i = 0; i < 6; i++) {
      const tenant = i % 2 === 0 ? a : b;
      expect((await unfilteredAgents(tenant)).map((row) => row.name)).to.deep.equal(tenant === a ? ['a-1', 'a-2'] : ['b-1']);
    }
    const tenants = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? b : a));
    const results = await Promise.all(tenants.map((tenant) => unfilteredAgents(tenant)));
    results.forEach((rows, i) => {
      expect(rows.length, `statement ${i}`).to.be.greaterThan(0);
      expect(rows.every((row) => row.tenant_id === tenants[i]!.tenantId), `statement ${i} saw another tenant`).to.equal(true);
    });
  });

  it("commits a write, and refuses a row of another workspace's, writing nothing", async () => {
    const { db } = testPlatform();
    const insert = (tenantId: string, name: string) =>
      tenantStatement(db, a.tenantId, (scope) =>
        scope.insertInto('agents').values({ id: `agt_${randomUUID()}`, tenant_id: tenantId, name, description: null }).returning('name').compile(),
      );
    expect(await insert(a.tenantId, 'a-written')).to.deep.equal([{ name: 'a-written' }]);
    expect((await unfilteredAgents(a)).map((row) => row.name)).to.include('a-written');
    expect((await failure(insert(b.tenantId, 'b-forged'))).message).to.match(/row-level security/);
    expect((await unfilteredAgents(b)).map((row) => row.name)).to.deep.equal(['b-1']);
  });

  it("runs statements in order as one transaction: a later one sees an earlier one's write, a failing one undoes them all", async () => {
    const { db } = testPlatform();
    const insert = (scope: TenantScoped, name: string) => scope.insertInto('agents').values({ id: `agt_${randomUUID()}`, tenant_id: a.tenantId, name, description: null }).compile();
    const seen = await tenantStatements(db, a.tenantId, (scope) => [
      insert(scope, 'first'),
      insert(scope, 'second'),
      scope.selectFrom('agents').select('name').where('name', 'in', ['first', 'second']).orderBy('name').compile(),
    ]);
    expect(seen).to.deep.equal([{ name: 'first' }, { name: 'second' }]);
    const failed = await failure(
      tenantStatements(db, a.tenantId, (scope) => [insert(scope, 'undone'), sql`select 1 / 0`.compile(scope), scope.selectFrom('agents').select('name').compile()]),
    );
    expect(failed.message).to.match(/division by zero/);
    expect((await unfilteredAgents(a)).map((row) => row.name)).to.not.include('undone');
  });

  it('answers a failed statement with its error and leaves the connections as they were', async () => {
    const { db } = testPlatform();
    const failed = await failure(tenantStatement(db, a.tenantId, (scope) => sql<{ x: number }>`select 1 / (count(*) - count(*)) as x from agents`.compile(scope)));
    expect(failed.message).to.match(/division by zero/);
    // More statements than the pool has connections, then every connection asked who it is.
    await Promise.all(Array.from({ length: 30 }, (_, i) => unfilteredAgents(i % 2 ? a : b)));
    const sessions = await poolSessions(8);
    for (const session of sessions) {
      expect(session.role).to.not.equal(TENANT_ROLE);
      expect(session.tenant).to.equal(null);
    }
  });

  it('refuses a parameter it cannot convert before sending anything, and the statements ahead of it with it (Postgres)', async function () {
    if (testPlatform().databaseKind !== 'postgres') {
      console.log("      (skipped on embedded PGlite: there statements run in withTenant's transaction, one by one, and PGlite converts parameters its own way)");
      this.skip();
    }
    const { db } = testPlatform();
    const unconvertible = {
      toPostgres() {
        throw new Error('cannot be a parameter');
      },
    };
    const name = `never-${randomUUID()}`;
    for (const position of ['ahead', 'last'] as const) {
      const insert = (scope: TenantScoped) => scope.insertInto('agents').values({ id: `agt_${randomUUID()}`, tenant_id: a.tenantId, name, description: null }).compile();
      const bad = (scope: TenantScoped) => sql`select ${unconvertible}::text`.compile(scope);
      const failed = await failure(
        tenantStatements(db, a.tenantId, (scope) => (position === 'ahead' ? [insert(scope), bad(scope), insert(scope)] : [insert(scope), bad(scope)])),
      );
      expect(failed.message, position).to.match(/cannot be a parameter/);
    }
    expect((await unfilteredAgents(a)).map((row) => row.name)).to.not.include(name);
    // Every connection still answers, as itself.
    for (const session of await poolSessions(8)) expect(session.role).to.not.equal(TENANT_ROLE);
  });

  it('sends the statement alone: no begin, no commit, one query (Postgres)', async function () {
    if (testPlatform().databaseKind !== 'postgres') {
      console.log('      (skipped on embedded PGlite: one in-process connection, no round trips; there a statement is a withTenant transaction)');
      this.skip();
    }
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [first] = args;
      sent.push(typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '?'));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await unfilteredAgents(a);
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(sent).to.have.length(1);
    expect(sent[0]).to.match(/^select "tenant_id", "name" from "agents"/);
  });
});
