import { expect } from 'chai';
import { sql } from 'kysely';
import { openDatabase, type Db, type OpenDatabase } from '../db/database.js';
import { IdleCheckoutPool } from '../db/idle-checkout-pool.js';
import { migrateToLatest } from '../db/migrate.js';
import { readAsTenant } from '../db/tenant-reads.js';
import { tenantStatement } from '../db/tenant-statement.js';
import { withTenant, type TenantScoped } from '../db/tenant-transaction.js';
import { failure } from './support/failure.js';
import { postgresBinDirOrSkip, startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.js';

/**
 * db/tenant-transaction.ts over node-postgres: `withTenant`'s `begin` carries the tenant settings in one
 * message. When the settings fail after `begin` has run, the connection must not go back to the pool
 * inside an aborted transaction, where every later statement on it would fail. A role that is not a
 * member of the tenant role makes them fail every time; a cancel or a statement timeout would do the
 * same, by chance. And the pools (db/idle-checkout-pool.ts) never hand out a connection left inside a
 * transaction, whichever path takes it. On a cluster of its own, as it creates a login role.
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

  it('never hands out a connection left inside a transaction: Kysely, tenant transactions, tenant statements and tenant reads get a fresh one', async () => {
    const owner = await openAs('postgres');
    await migrateToLatest(owner);
    /** A bug elsewhere: the pool's one connection handed back inside a transaction. Answers its backend. */
    const leaveInTransaction = async (db: Db | TenantScoped) => {
      const { pid } = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!;
      await sql`begin`.execute(db);
      return pid;
    };
    /** The next statement's session: its backend, its tenant, and whether a transaction begun before it is open. */
    const sessionIn = async (db: Db | TenantScoped) =>
      (
        await sql<{ pid: number; tenant: string | null; in_transaction: boolean }>`
          select pg_backend_pid() as pid, nullif(current_setting('app.tenant_id', true), '') as tenant,
                 now() <> statement_timestamp() as in_transaction`.execute(db)
      ).rows[0]!;
    const closed = async (pid: number) => {
      for (let waited = 0; waited < 50; waited++) {
        const { rows } = await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(owner);
        if (rows.length === 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return false;
    };

    const paths: Record<string, () => Promise<{ stale: number; session: { pid: number; tenant: string | null; in_transaction: boolean } }>> = {
      'a Kysely query': async () => ({ stale: await leaveInTransaction(owner), session: await sessionIn(owner) }),
      'a tenant transaction': async () => ({ stale: await leaveInTransaction(owner), session: await withTenant(owner, 'ten_a', (tx) => sessionIn(tx)) }),
      'a tenant statement': async () => {
        const stale = await leaveInTransaction(owner);
        const [session] = await tenantStatement(owner, 'ten_a', (scope) =>
          sql<{ pid: number; tenant: string | null; in_transaction: boolean }>`
            select pg_backend_pid() as pid, current_setting('app.tenant_id') as tenant, now() <> statement_timestamp() as in_transaction`.compile(scope));
        return { stale, session: session! };
      },
      'a tenant read': async () => ({
        stale: await readAsTenant(owner, 'ten_a', leaveInTransaction),
        session: await readAsTenant(owner, 'ten_a', sessionIn),
      }),
    };
    for (const [path, run] of Object.entries(paths)) {
      const { stale, session } = await run();
      expect(session.pid, path).to.not.equal(stale);
      // Tenant transactions and statements run inside transactions of their own; the others stand alone.
      if (path === 'a Kysely query' || path === 'a tenant read') expect(session.in_transaction, path).to.equal(false);
      expect(session.tenant, path).to.equal(path === 'a Kysely query' ? null : 'ten_a');
      expect(await closed(stale), `${path}: the stale connection is closed`).to.equal(true);
    }
  });

  it("also hands out a fresh connection to pg-pool's own query, which checks out with a callback", async () => {
    const pool = new IdleCheckoutPool({ connectionString: cluster!.url, max: 1 });
    try {
      const stale = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await pool.query('begin');
      const session = (await pool.query<{ pid: number; in_transaction: boolean }>('select pg_backend_pid() as pid, now() <> statement_timestamp() as in_transaction')).rows[0]!;
      expect(session.pid).to.not.equal(stale);
      expect(session.in_transaction).to.equal(false);
    } finally {
      await pool.end();
    }
  });
});
