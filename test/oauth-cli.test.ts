import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { checkCredentials, listWorkspaces } from '../api/oauth/users.js';
import { openDatabase, type Db } from '../db/database.js';
import { testPlatform } from './support/global.js';

const run = promisify(execFile);
const CLI = path.resolve('dist/scripts/cli.js');

/** `agent-platform user create`: the people who may sign in on the consent page. */
describe('oauth: the user create command', () => {
  /** As in cli.test.ts: the platform's Postgres when there is one, else a PGlite folder of its own. */
  function cliEnv(): NodeJS.ProcessEnv {
    if (testPlatform().databaseKind === 'postgres') return { ...process.env };
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-cli-')) };
    delete env.DATABASE_URL;
    return env;
  }

  /** Opens the database the CLI wrote to (after it exited: PGlite belongs to one process). */
  async function withCliDatabase<T>(env: NodeJS.ProcessEnv, work: (db: Db) => Promise<T>): Promise<T> {
    if (testPlatform().databaseKind === 'postgres') return work(testPlatform().db);
    const database = await openDatabase({ kind: 'pglite', dataDir: path.join(env.DATA_DIR!, 'pglite') });
    try {
      return await work(database.db);
    } finally {
      await database.close();
    }
  }

  function runWithStdin(args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('node', [CLI, ...args], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  it('creates a user in a workspace, reading the password from stdin, and adds workspaces on a second run', async function () {
    this.timeout(60_000);
    const env = cliEnv();
    const first = JSON.parse((await run('node', [CLI, 'tenant', 'create', 'cli-oauth-one'], { env })).stdout);
    const second = JSON.parse((await run('node', [CLI, 'tenant', 'create', 'cli-oauth-two'], { env })).stdout);
    const email = `Cli-${Math.random().toString(36).slice(2, 8)}@Example.test`;

    const created = await runWithStdin(['user', 'create', '--email', email, '--password-stdin', '--tenant', first.tenant_id], env, 'piped password\n');
    expect(created.code, created.stderr).to.equal(0);
    const user = JSON.parse(created.stdout);
    expect(user).to.include({ email: email.toLowerCase(), created: true });
    expect(user.user_id).to.match(/^usr_/);

    const again = JSON.parse(
      (await run('node', [CLI, 'user', 'create', '--email', email, '--password', 'a new password', '--tenant', second.tenant_id], { env })).stdout,
    );
    expect(again).to.include({ user_id: user.user_id, created: false, password_changed: true });

    await withCliDatabase(env, async (db) => {
      expect(await checkCredentials(db, email, 'piped password')).to.equal(undefined);
      expect(await checkCredentials(db, email, 'a new password')).to.include({ id: user.user_id, email: email.toLowerCase() });
      const workspaces = await listWorkspaces(db, user.user_id);
      expect(workspaces.map((workspace) => workspace.id).sort()).to.deep.equal([first.tenant_id, second.tenant_id].sort());
      const stored = await db.selectFrom('users').select('password_hash').where('id', '=', user.user_id).executeTakeFirstOrThrow();
      expect(stored.password_hash).to.match(/^scrypt\$32768\$8\$3\$/).and.not.include('a new password');
    });
  });

  it('exits 2 with usage for missing options, a short password or an unknown workspace', async function () {
    this.timeout(60_000);
    const env = cliEnv();
    for (const args of [
      ['user', 'create', '--email', 'a@example.test', '--password', 'long enough'],
      ['user', 'create', '--email', 'a@example.test', '--tenant', 'ten_x'],
      ['user', 'create', '--email', 'a@example.test', '--password', 'short', '--tenant', 'ten_x'],
      ['user', 'create', '--email', 'a@example.test', '--password', 'long enough', '--tenant', 'ten_missing'],
    ]) {
      const error = await run('node', [CLI, ...args], { env }).then(() => undefined, (err: { code: number; stderr: string }) => err);
      expect(error?.code, args.join(' ')).to.equal(2);
      expect(error?.stderr).to.include('usage:');
    }
  });
});
