import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sql } from 'kysely';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { readAsTenant } from '../db/tenant-reads.js';
import { withTenant } from '../db/tenant-transaction.js';
import { postgresBinDirOrSkip, startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.js';

/**
 * DATABASE_URL may name Postgres' Unix socket folder (`postgres://user@/db?host=/var/run/postgresql`),
 * which the README recommends when Postgres runs on the platform's host: a query's send then skips the
 * kernel's TCP loopback (docs/performance.md). What the platform opens on it is checked here on a
 * cluster of its own: the pools (with their TCP keepalive options, which a socket has no use for), the
 * migrations, a tenant transaction, and the LISTEN connection.
 */
describe('Postgres over a Unix socket', function () {
  this.timeout(120_000);
  let cluster: PostgresCluster | undefined;

  before(async function () {
    if (!process.env.DATABASE_URL) {
      console.log('      (skipped: the suite runs on embedded PGlite; the Postgres pass, as CI runs it, checks this)');
      return this.skip();
    }
    const binDir = await postgresBinDirOrSkip(this);
    cluster = await startPostgresCluster(binDir);
  });

  after(async () => {
    await cluster?.destroy();
  });

  it('migrates, runs a tenant transaction and hears NOTIFY, all without TCP', async () => {
    const { db, listen, close } = await openDatabase({ kind: 'postgres', url: cluster!.socketUrl, poolSize: 2, readPoolSize: 1, preparedStatements: true, poolIdleMs: 60_000 });
    try {
      await migrateToLatest(db);
      // A client on a Unix socket has no address.
      const client = (await sql<{ address: string | null }>`select inet_client_addr()::text as address`.execute(db)).rows[0]!;
      expect(client.address).to.equal(null);

      const tenantId = `ten_${randomUUID().replaceAll('-', '')}`;
      const seen = await withTenant(db, tenantId, async (tx) => (await sql<{ tenant: string }>`select current_setting('app.tenant_id') as tenant`.execute(tx)).rows[0]!.tenant);
      expect(seen).to.equal(tenantId);

      const channel = `socket_${randomUUID().replaceAll('-', '')}`;
      const payloads: string[] = [];
      const unlisten = await listen(channel, (payload) => payloads.push(payload));
      await sql`select pg_notify(${channel}, 'over the socket')`.execute(db);
      for (let waited = 0; payloads.length === 0 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(payloads).to.deep.equal(['over the socket']);
      // The tenant reads' pool too; and no connection of this database, the listener's among them, came over TCP.
      expect(await readAsTenant(db, tenantId, async (reader) => (await sql<{ one: number }>`select 1 as one`.execute(reader)).rows[0]!.one)).to.equal(1);
      const backends = await sql<{ address: string | null }>`select client_addr::text as address from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`.execute(db);
      expect(backends.rows.length, 'the pools and the listener').to.be.at.least(3);
      expect(backends.rows.map((row) => row.address)).to.satisfy((addresses: Array<string | null>) => addresses.every((address) => address === null));
      await unlisten();
    } finally {
      await close();
    }
  });
});
