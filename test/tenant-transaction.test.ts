import { expect } from 'chai';
import { sql } from 'kysely';
import { openDatabase, type Db, type OpenDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { tenantStatement } from '../db/tenant-statement.js';
import { withTenant } from '../db/tenant-transaction.js';
import { failure } from './support/failure.js';
import { postgresBinDirOrSkip, startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.js';

/**
 * db/tenant-transaction.ts over node-postgres: `withTenant`'s `begin` carries the tenant settings in one
 * message. When the settings fail after `begin` has run, the connection must not go back to the pool
 * inside an aborted transaction, where every later statement on it would fail. A role that is not a
 * member of the tenant role makes them fail every time; a cancel or a statement timeout would do the
 * same, by chance. On a cluster of its own, as it creates a login role.
 */
describe('tenant transactions on node-postgres', function () {
  this.timeout(120_000);
  let cluster: PostgresCluster | undefined;
  const opened: OpenDatabase[] = [];

  before(async function () {
    if (!process.env.DATABASE_URL) {
      console.log("      (skipped: the suite runs on embedded PGlite, whose transactions begin without this driver; the Postgres pass checks this)");
      return this.skip();
    }
    cluster = await startPostgresCluster(await postgresBinDirOrSkip(this));
  });

  after(async () => {
    for (const database of opened) await database.close();
    await cluster?.destroy();
  });

  /** A database of one connection, so each statement after the failure runs on the connection that failed. */
  const openAs = async (user: string) => {
    const database = await openDatabase({ kind: 'postgres', url: cluster!.url.replace('postgres@', `${user}@`), poolSize: 1, readPoolSize: 1, preparedStatements: true, poolIdleMs: 60_000 });
    opened.push(database);
    return database.db;
  };

  /** Who the next statement runs as, and whether it runs inside a transaction begun before it. */
  const sessionOf = async (db: Db) =>
    (
      await sql<{ role: string; tenant: string | null; in_transaction: boolean }>`
        select current_user as role, nullif(current_setting('app.tenant_id', true), '') as tenant,
               now() <> statement_timestamp() as in_transaction`.execute(db)
    ).rows[0];

  it('leaves its connection usable, outside any transaction, when the tenant settings fail after begin', async () => {
    const owner = await openAs('postgres');
    await migrateToLatest(owner);
    await sql`create role stranger login`.execute(owner);
    const stranger = await openAs('stranger');

    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await failure(withTenant(stranger, 'ten_any', async () => 'ran'));
      expect(refused.message, `attempt ${attempt}`).to.match(/permission denied to set role/);
      expect(await sessionOf(stranger), `attempt ${attempt}`).to.deep.equal({ role: 'stranger', tenant: null, in_transaction: false });
    }
    // And the owner's tenant transactions still begin as they should.
    const seen = await withTenant(owner, 'ten_owner', async (tx) => (await sql<{ tenant: string }>`select current_setting('app.tenant_id') as tenant`.execute(tx)).rows[0]!.tenant);
    expect(seen).to.equal('ten_owner');
  });

  it('does not run a tenant statement on a connection left inside a transaction, and closes that connection', async () => {
    const owner = await openAs('postgres');
    await migrateToLatest(owner);
    // A bug elsewhere: the pool's one connection handed back inside a transaction.
    await owner.connection().execute((connection) => sql`begin`.execute(connection));

    const refused = await failure(tenantStatement(owner, 'ten_a', (scope) => sql<{ tenant: string }>`select current_setting('app.tenant_id') as tenant`.compile(scope)));
    expect(refused.message).to.match(/not idle/);
    // The next statement gets a new connection: the owner's own, outside any transaction, with no tenant set.
    expect(await sessionOf(owner)).to.deep.equal({ role: 'postgres', tenant: null, in_transaction: false });
    expect(await tenantStatement(owner, 'ten_a', (scope) => sql<{ tenant: string }>`select current_setting('app.tenant_id') as tenant`.compile(scope))).to.deep.equal([{ tenant: 'ten_a' }]);
  });
});
