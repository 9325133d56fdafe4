import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

/**
 * A throwaway Postgres cluster of its own (initdb into a temporary folder), for tests that stop and
 * restart the server — which the shared DATABASE_URL server must never be. It uses the installed
 * Postgres (pgvector is installed into it, so `create extension vector` works). As root, Postgres refuses
 * to run, so initdb and pg_ctl run as the `postgres` OS user.
 */
export interface PostgresCluster {
  /** The URL of the cluster's database for the platform (TCP on 127.0.0.1). */
  url: string;
  /** The same database through the server's Unix socket (`?host=` its socket folder). */
  socketUrl: string;
  port: number;
  /** `pg_ctl stop -m fast`: every connection is cut, as in a real restart or failover. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  /** Stops the server and removes the cluster. */
  destroy(): Promise<void>;
}

/** Where initdb and pg_ctl are, or undefined when this machine has no Postgres server installed. */
export async function postgresBinDir(): Promise<string | undefined> {
  const candidates = ['/usr/lib/postgresql/15/bin'];
  try {
    candidates.push((await run('pg_config', ['--bindir'])).stdout.trim());
  } catch {
    // no pg_config on PATH: only the Debian location is tried
  }
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl')));
}

/** The same, or the test skipped, saying why, on a machine with no Postgres server installed. */
export async function postgresBinDirOrSkip(test: Mocha.Context): Promise<string> {
  const binDir = await postgresBinDir();
  if (binDir) return binDir;
  console.log('      (skipped: no Postgres server installed here — no initdb in /usr/lib/postgresql/15/bin or `pg_config --bindir`)');
  return test.skip();
}

export async function startPostgresCluster(binDir: string, database = 'agent_platform'): Promise<PostgresCluster> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-pg-'));
  const dataDir = path.join(root, 'data');
  const logFile = path.join(root, 'postgres.log');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await run('chown', ['-R', 'postgres:postgres', root]);
  const pgTool = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(binDir, tool), ...args]) : run(path.join(binDir, tool), args);

  // Unix socket in the cluster's own folder (not /var/run/postgresql, which the shared server uses);
  // fsync off: the data is thrown away, and a fast stop still shuts down cleanly.
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const startServer = async () => {
    await pgTool('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']);
  };
  const stopServer = async () => {
    await pgTool('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  try {
    await pgTool('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await startServer();
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    try {
      await admin.query(`create database ${pg.escapeIdentifier(database)}`);
    } finally {
      await admin.end();
    }
  } catch (err) {
    // Nothing left behind: a server that started is stopped, the folder removed.
    await pgTool('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database}`,
    socketUrl: `postgres://postgres@/${database}?host=${encodeURIComponent(root)}&port=${port}`,
    port,
    stopServer,
    startServer,
    destroy: async () => {
      await stopServer().catch(() => undefined);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
