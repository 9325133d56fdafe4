import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { sql } from 'kysely';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase } from '../db/database.js';

describe('database configuration from the environment', () => {
  const url = 'postgres://db.example/agent_platform';

  it('sizes both pools, the read pool like the other unless told', () => {
    expect(databaseConfigFromEnv({ DATABASE_URL: url })).to.include({ kind: 'postgres', poolSize: 10, readPoolSize: 10 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: '25' })).to.include({ poolSize: 25, readPoolSize: 25 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: '25', DATABASE_READ_POOL_SIZE: '4' })).to.include({ poolSize: 25, readPoolSize: 4 });
  });

  it('refuses a pool size that is not a positive integer, naming the setting', () => {
    for (const bad of ['abc', '0', '-3', '2.5']) {
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_SIZE: bad })).to.throw(`DATABASE_POOL_SIZE must be a positive integer, not '${bad}'`);
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_READ_POOL_SIZE: bad })).to.throw(`DATABASE_READ_POOL_SIZE must be a positive integer, not '${bad}'`);
    }
  });

  it('prepares repeated statements unless DATABASE_PREPARED_STATEMENTS is off, and refuses anything but on and off', () => {
    expect(databaseConfigFromEnv({ DATABASE_URL: url })).to.include({ preparedStatements: true });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'on' })).to.include({ preparedStatements: true });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'off' })).to.include({ preparedStatements: false });
    for (const bad of ['false', 'no', 'OFF']) {
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: bad })).to.throw(`DATABASE_PREPARED_STATEMENTS must be 'on' or 'off', not '${bad}'`);
    }
  });

  it('keeps an idle pooled connection ten minutes unless DATABASE_POOL_IDLE_MS says otherwise (0: until the process ends)', () => {
    expect(databaseConfigFromEnv({ DATABASE_URL: url })).to.include({ poolIdleMs: 600_000 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_IDLE_MS: '30000' })).to.include({ poolIdleMs: 30_000 });
    expect(databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_IDLE_MS: '0' })).to.include({ poolIdleMs: 0 });
    for (const bad of ['-1', 'ten', '1.5']) {
      expect(() => databaseConfigFromEnv({ DATABASE_URL: url, DATABASE_POOL_IDLE_MS: bad })).to.throw(`DATABASE_POOL_IDLE_MS must be an integer of at least 0, not '${bad}'`);
    }
  });

  it("closes a pooled connection once it has been idle DATABASE_POOL_IDLE_MS, and not before (Postgres)", async function () {
    const config = databaseConfigFromEnv();
    if (config.kind !== 'postgres') {
      console.log('      (skipped on embedded PGlite: one in-process connection, no pool)');
      return this.skip();
    }
    const backend = async (db: Awaited<ReturnType<typeof openDatabase>>['db']) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
    for (const { poolIdleMs, reopened } of [{ poolIdleMs: 150, reopened: true }, { poolIdleMs: 60_000, reopened: false }]) {
      const { db, close } = await openDatabase({ ...config, poolSize: 1, readPoolSize: 1, poolIdleMs });
      try {
        const first = await backend(db);
        expect(await backend(db), 'a connection used again at once').to.equal(first);
        await sleep(500);
        expect((await backend(db)) !== first, `after 500 ms idle with DATABASE_POOL_IDLE_MS=${poolIdleMs}, a new connection`).to.equal(reopened);
      } finally {
        await close();
      }
    }
  });

  it('probes its idle connections, pooled and LISTEN, with TCP keepalives after 30 s, not the system default of 2 hours (Postgres, Linux)', async function () {
    const config = databaseConfigFromEnv();
    if (config.kind !== 'postgres' || process.platform !== 'linux') {
      console.log('      (skipped: needs Postgres over TCP and /proc/net on Linux)');
      return this.skip();
    }
    const channel = `keepalive_probe_${randomUUID().replaceAll('-', '')}`;
    const { db, listen, close } = await openDatabase({ ...config, poolSize: 1, readPoolSize: 1 });
    const unlisten = await listen(channel, () => undefined);
    try {
      const ports = (
        await sql<{ port: number | null }>`select client_port as port from pg_stat_activity where pid = pg_backend_pid() or query = ${`LISTEN "${channel}"`}`.execute(db)
      ).rows.map((row) => row.port);
      expect(ports, 'the pooled connection and the listener').to.have.length(2);
      if (ports.includes(null)) {
        console.log('      (skipped: DATABASE_URL connects over a Unix socket)');
        return this.skip();
      }
      for (const port of ports) expect(secondsToKeepAliveProbe(port!), `local port ${port}`).to.be.within(1, 30);
    } finally {
      await unlisten();
      await close();
    }
  });
});

/**
 * From /proc/net/tcp{,6}: the seconds until the first keepalive probe of our established socket on local
 * `port`. Each row has the local address:port in hex, the state (01: established), and after the queues
 * `tr:when`, the pending timer (02: keepalive) and the jiffies (USER_HZ, 100 a second) until it fires.
 */
function secondsToKeepAliveProbe(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const rows = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => fs.readFileSync(file, 'utf8').split('\n').slice(1));
  const socket = rows.map((row) => row.trim().split(/\s+/)).find((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '01');
  expect(socket, `a socket on local port ${port}`).to.not.equal(undefined);
  const [timer, when] = socket![5]!.split(':');
  expect(timer, 'a keepalive timer pending').to.equal('02');
  return parseInt(when!, 16) / 100;
}
