import { expect } from 'chai';
import { preparedPage } from '../db/page.js';
import { preparedQuery } from '../db/prepared-query.js';
import { readAsTenant } from '../db/tenant-reads.js';
import { withTenant, type TenantScoped } from '../db/tenant-transaction.js';
import type { TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { tenantsWithAgents } from './support/tenants-with-agents.js';

/** db/prepared-query.ts: built and compiled once per shape, run with each call's values. */
describe('prepared queries', () => {
  let a: TestTenant;
  let b: TestTenant;

  before(async () => {
    ({ a, b } = await tenantsWithAgents('prepared', { a: ['a-1', 'a-2', 'a-3'], b: ['b-1'] }, (name) => `${name} described`));
  });

  const asTenant = <T>(tenant: TestTenant, work: (reader: TenantScoped) => Promise<T>) => readAsTenant(testPlatform().db, tenant.tenantId, work);

  const agentsNamed = preparedQuery((db, { tenantId, name }: { tenantId: string; name: string | undefined }) => {
    const q = db.selectFrom('agents').select(['name', 'description']).where('tenant_id', '=', tenantId).orderBy('name');
    return name === undefined ? q : q.where('name', '=', name);
  });

  it('answers what the same query built by Kysely answers, with each call its own values', async () => {
    for (const [tenant, name] of [[a, 'a-2'], [b, 'b-1'], [a, 'a-3'], [a, 'no-such']] as const) {
      const prepared = await asTenant(tenant, (reader) => agentsNamed.execute(reader, { tenantId: tenant.tenantId, name }));
      const built = await asTenant(tenant, (reader) =>
        reader.selectFrom('agents').select(['name', 'description']).where('tenant_id', '=', tenant.tenantId).where('name', '=', name).orderBy('name').execute(),
      );
      expect(prepared, `${tenant.tenantId} ${name}`).to.deep.equal(built);
    }
  });

  it('leaves out the conditions of absent values: one shape per set of present values', async () => {
    const all = await asTenant(a, (reader) => agentsNamed.execute(reader, { tenantId: a.tenantId, name: undefined }));
    expect(all.map((row) => row.name)).to.deep.equal(['a-1', 'a-2', 'a-3']);
    // The shape with a name again, after the one without: each keeps its own SQL.
    const one = await asTenant(a, (reader) => agentsNamed.execute(reader, { tenantId: a.tenantId, name: 'a-1' }));
    expect(one).to.deep.equal([{ name: 'a-1', description: 'a-1 described' }]);
  });

  it('runs inside a transaction as well as on the read pool', async () => {
    const rows = await withTenant(testPlatform().db, b.tenantId, (tx) => agentsNamed.execute(tx, { tenantId: b.tenantId, name: undefined }));
    expect(rows.map((row) => row.name)).to.deep.equal(['b-1']);
  });

  it('refuses a builder that uses a value as a string or number, or does not pass one to the query', async () => {
    const comparing = preparedQuery((db, { limit }: { limit: number }) => db.selectFrom('agents').select('name').limit(limit > 10 ? 10 : limit));
    const unused = preparedQuery((db, _values: { tenantId: string }) => db.selectFrom('agents').select('name'));
    const asList = preparedQuery((db, { id }: { id: string }) => db.selectFrom('agents').select('name').where('id', 'in', [id, id]));
    for (const [query, values, message] of [
      [comparing, { limit: 5 }, /the value 'limit' was used while building the query/],
      [unused, { tenantId: a.tenantId }, /tenantId did not become a parameter/],
    ] as const) {
      const error = await asTenant(a, (reader) => (query as typeof comparing).execute(reader, values as { limit: number })).catch((err: unknown) => err);
      expect(String(error)).to.match(message);
    }
    // A value used twice is two parameters of the same value, which is fine.
    expect(await asTenant(a, (reader) => asList.execute(reader, { id: 'agt_none' }))).to.deep.equal([]);
  });

  describe('pages', () => {
    const agentNames = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenantId));

    it('pages through a list in id order, the cursor after the last row, to the end', async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const page = await asTenant(a, (reader) => agentNames(reader, { tenantId: a.tenantId }, { limit: 2, cursor }));
        names.push(...page.items.map((row) => row.name));
        if (page.nextCursor === null) break;
        expect(page.nextCursor).to.equal(page.items.at(-1)!.id);
        cursor = page.nextCursor;
      }
      expect(names).to.deep.equal(['a-1', 'a-2', 'a-3']);
      // An empty cursor is no cursor, as the lists always took it.
      const first = await asTenant(a, (reader) => agentNames(reader, { tenantId: a.tenantId }, { limit: 1, cursor: '' }));
      expect(first.items.map((row) => row.name)).to.deep.equal(['a-1']);
    });
  });
});
