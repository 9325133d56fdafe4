import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../db/database.js';
import { IdleCheckoutPool } from '../db/idle-checkout-pool.js';
import type { Database } from '../db/schema.js';
import { PREPARED_PER_CONNECTION, StatementCachingClient, USES_BEFORE_PREPARING } from '../db/statement-cache.js';
import { attachTenantStatements, tenantStatement, tenantStatements } from '../db/tenant-statement.js';
import { TENANT_ROLE, type TenantScoped } from '../db/tenant-transaction.js';
import { failure } from './support/failure.js';
import { testPlatform } from './support/global.js';
import { tenantsWithAgents } from './support/tenants-with-agents.js';

/**
 * db/statement-cache.ts: repeated statements prepared on their connection. Each test runs on a pool of
 * one connection of its own, so that Postgres' `pg_prepared_statements` (one session's) shows what that
 * connection holds; statement texts carry a fresh id, as the counts of uses are the process's.
 */
describe('statement cache (Postgres)', function () {
  let pool: IdleCheckoutPool;
  /** A table of this test's, readable by the tenant role, whose columns the tests change. */
  let probe: string;

  before(function () {
    if (testPlatform().databaseKind !== 'postgres') {
      console.log('      (skipped on embedded PGlite: one in-process connection, no protocol-level statements to name)');
      this.skip();
    }
  });

  beforeEach(async () => {
    pool = new IdleCheckoutPool({ connectionString: process.env.DATABASE_URL, max: 1, Client: StatementCachingClient });
    probe = `statement_cache_probe_${randomUUID().replaceAll('-', '')}`;
    await pool.query(`create table ${probe} (id int primary key, a text); insert into ${probe} values (1, 'one'); grant select on ${probe} to ${TENANT_ROLE}`);
  });

  afterEach(async () => {
    await pool?.query(`drop table if exists ${probe}`);
    await pool?.end();
  });

  /** The texts the pool's one connection holds as named statements. */
  const prepared = async () => (await pool.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map((row) => row.statement);
  const marked = (text: string) => `${text} -- ${randomUUID()}`;

  it(`prepares a statement with parameters from its ${USES_BEFORE_PREPARING}rd run, and one without parameters never`, async () => {
    const text = marked('select $1::int + 1 as next');
    for (let run = 1; run <= USES_BEFORE_PREPARING + 2; run++) {
      expect((await pool.query(text, [run])).rows).to.deep.equal([{ next: run + 1 }]);
      expect(await prepared(), `after run ${run}`).to.have.length(run < USES_BEFORE_PREPARING ? 0 : 1);
    }
    expect(await prepared()).to.deep.equal([text]);

    const constant = marked('select 41 + 1 as answer');
    for (let run = 1; run <= USES_BEFORE_PREPARING + 2; run++) expect((await pool.query(constant, [])).rows).to.deep.equal([{ answer: 42 }]);
    expect(await prepared()).to.deep.equal([text]);
  });

  it(`holds at most ${PREPARED_PER_CONNECTION} statements on a connection and runs the others unnamed`, async () => {
    const texts = Array.from({ length: PREPARED_PER_CONNECTION + 10 }, (_, i) => marked(`select $1::int * ${i} as product`));
    for (let run = 0; run < USES_BEFORE_PREPARING; run++) {
      for (const [i, text] of texts.entries()) expect((await pool.query(text, [2])).rows[0].product).to.equal(2 * i);
    }
    expect(await prepared()).to.have.length(PREPARED_PER_CONNECTION);
    expect((await pool.query(texts.at(-1)!, [3])).rows[0].product).to.equal(3 * (texts.length - 1));
  });

  /** Runs `text` until it is prepared on the connection. */
  const prepare = async (text: string, values: unknown[]) => {
    for (let run = 0; run < USES_BEFORE_PREPARING; run++) await pool.query(text, values);
    expect(await prepared()).to.include(text);
  };

  it("runs a standalone statement again, prepared anew, once its table's columns changed", async () => {
    const text = marked(`select * from ${probe} where id = $1`);
    await prepare(text, [1]);
    await pool.query(`alter table ${probe} add column b text default 'bee'`);
    expect((await pool.query(text, [1])).rows).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
    expect((await pool.query(text, [1])).rows).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
  });

  it("fails a transaction whose prepared statement's table changed, once: the next transaction prepares it anew", async () => {
    const text = marked(`select * from ${probe} where id = $1`);
    await prepare(text, [1]);
    await pool.query(`alter table ${probe} add column b text default 'bee'`);
    const client = await pool.connect();
    try {
      await client.query('begin');
      expect((await failure(client.query(text, [1]))).message).to.match(/cached plan must not change result type/);
      await client.query('rollback');
      await client.query('begin');
      expect((await client.query(text, [1])).rows).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
      await client.query('commit');
    } finally {
      client.release();
    }
  });

  it("runs a standalone statement again, prepared anew, once a column's type changed under its parameter", async () => {
    const text = marked(`select a from ${probe} where id = $1`);
    await prepare(text, [1]);
    await pool.query(`alter table ${probe} alter column id type text`);
    expect((await pool.query(text, ['1'])).rows).to.deep.equal([{ a: 'one' }]);
  });

  it('keeps its statement through errors of the data, and through a value that cannot be converted', async () => {
    const text = marked('select 10 / $1::int as quotient');
    // On one checked-out client: the pool's own `query` drops a connection whose query failed.
    const client = await pool.connect();
    try {
      for (let run = 0; run < USES_BEFORE_PREPARING; run++) await client.query(text, [1]);
      expect((await failure(client.query(text, [0]))).message).to.match(/division by zero/);
      const unconvertible = {
        toPostgres() {
          throw new Error('cannot be a parameter');
        },
      };
      expect((await failure(client.query(text, [unconvertible]))).message).to.match(/cannot be a parameter/);
      // In a transaction, where a statement that went missing would not be run again.
      await client.query('begin');
      expect((await client.query(text, [5])).rows).to.deep.equal([{ quotient: 2 }]);
      await client.query('commit');
      const statements = (await client.query<{ statement: string }>('select statement from pg_prepared_statements')).rows;
      expect(statements.filter((row) => row.statement === text)).to.have.length(1);
    } finally {
      client.release();
    }
  });

  it("fails one transaction per process, not per connection, once a prepared statement's table changed", async () => {
    const two = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, Client: StatementCachingClient });
    const [first, second] = [await two.connect(), await two.connect()];
    try {
      const text = marked(`select * from ${probe} where id = $1`);
      for (let run = 0; run < USES_BEFORE_PREPARING; run++) for (const client of [first, second]) await client.query(text, [1]);
      await pool.query(`alter table ${probe} add column b text default 'bee'`);
      const inTransaction = async (client: pg.PoolClient) => {
        await client.query('begin');
        try {
          return (await client.query(text, [1])).rows;
        } finally {
          await client.query('rollback');
        }
      };
      expect((await failure(inTransaction(first))).message).to.match(/cached plan must not change result type/);
      expect(await inTransaction(second)).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
      expect(await inTransaction(first)).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
    } finally {
      first.release();
      second.release();
      await two.end();
    }
  });

  it("scopes a statement prepared as the owner by row-level security when it runs as a tenant, each tenant's own rows", async () => {
    const prefix = `cache-${randomUUID()}`;
    const { a, b } = await tenantsWithAgents(prefix, { a: [`${prefix}-a1`], b: [`${prefix}-b1`, `${prefix}-b2`] });
    // No tenant filter of its own: row-level security alone scopes it.
    const text = marked('select tenant_id, name from agents where name like $1 order by name');
    const agents = async (tenantId?: string) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        if (tenantId) await client.query("select set_config('role', $1, true), set_config('app.tenant_id', $2, true)", [TENANT_ROLE, tenantId]);
        const rows = (await client.query<{ tenant_id: string; name: string }>(text, [`${prefix}%`])).rows;
        await client.query('commit');
        return rows.map((row) => `${row.tenant_id === a.tenantId ? 'a' : row.tenant_id === b.tenantId ? 'b' : '?'}:${row.name.slice(prefix.length + 1)}`);
      } finally {
        client.release();
      }
    };
    for (let run = 0; run < USES_BEFORE_PREPARING; run++) expect(await agents()).to.deep.equal(['a:a1', 'b:b1', 'b:b2']);
    expect(await prepared()).to.include(text);
    for (let round = 0; round < 3; round++) {
      expect(await agents(a.tenantId)).to.deep.equal(['a:a1']);
      expect(await agents(b.tenantId)).to.deep.equal(['b:b1', 'b:b2']);
      expect(await agents()).to.deep.equal(['a:a1', 'b:b1', 'b:b2']);
    }
  });

  describe('tenant statements on it', () => {
    let db: Db;
    const tenantId = `ten_${randomUUID()}`;

    beforeEach(() => {
      db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
      attachTenantStatements(db, pool);
    });

    /** A read of the probe table as the tenant (its text is this test's own, as the table is). */
    const probeRead = (scope: TenantScoped) => sql<{ id: number; a: string }>`select * from ${sql.table(probe)} where id = ${1}`.compile(scope);

    it('prepares the last statement of the pipeline, which later calls bind to', async () => {
      for (let run = 0; run < USES_BEFORE_PREPARING + 2; run++) expect(await tenantStatement(db, tenantId, probeRead)).to.deep.equal([{ id: 1, a: 'one' }]);
      const statements = await prepared();
      expect(statements.filter((statement) => statement.includes(probe))).to.have.length(1);
    });

    it('keeps a statement it named when a statement ahead of it failed, and binds to it next time', async () => {
      for (let run = 1; run < USES_BEFORE_PREPARING; run++) await tenantStatement(db, tenantId, probeRead);
      // This call names the read; the statement ahead of it fails, so the read itself never runs.
      const failed = await failure(tenantStatements(db, tenantId, (scope) => [sql`select 1 / (${0}::int)`.compile(scope), probeRead(scope)]));
      expect(failed.message).to.match(/division by zero/);
      expect(await tenantStatement(db, tenantId, probeRead)).to.deep.equal([{ id: 1, a: 'one' }]);
      expect(await tenantStatement(db, tenantId, probeRead)).to.deep.equal([{ id: 1, a: 'one' }]);
    });

    it("runs the pipeline again, prepared anew, once its table's columns changed", async () => {
      for (let run = 0; run < USES_BEFORE_PREPARING; run++) await tenantStatement(db, tenantId, probeRead);
      expect((await prepared()).filter((statement) => statement.includes(probe))).to.have.length(1);
      await pool.query(`alter table ${probe} add column b text default 'bee'`);
      expect(await tenantStatement(db, tenantId, probeRead)).to.deep.equal([{ id: 1, a: 'one', b: 'bee' }]);
    });
  });
});
