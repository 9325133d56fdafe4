import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { call } from './support/api.js';
import { testPlatform } from './support/global.js';

const run = promisify(execFile);
const CLI = path.resolve('dist/scripts/cli.js');

/**
 * The CLI works on the server's database settings. With Postgres it shares the test platform's database,
 * so its keys work against the running API; PGlite belongs to one process, so there it gets its own folder.
 */
function cliEnv(): NodeJS.ProcessEnv {
  if (testPlatform().databaseKind === 'postgres') return { ...process.env };
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-cli-')) };
  delete env.DATABASE_URL;
  return env;
}

describe('agent-platform CLI', () => {
  it('creates a tenant with a management key, and more keys for it', async () => {
    const env = cliEnv();
    const created = JSON.parse((await run('node', [CLI, 'tenant', 'create', 'acme'], { env })).stdout);
    expect(created.tenant_id).to.match(/^ten_/);
    expect(created.api_key).to.match(/^svc_sk_[0-9A-Za-z]{43}$/);

    const standard = JSON.parse((await run('node', [CLI, 'key', 'create', '--tenant', created.tenant_id, '--standard'], { env })).stdout);
    expect(standard).to.include({ tenant_id: created.tenant_id, kind: 'standard' });
    const management = JSON.parse((await run('node', [CLI, 'key', 'create', '--tenant', created.tenant_id], { env })).stdout);
    expect(management.kind).to.equal('management');

    if (testPlatform().databaseKind === 'postgres') {
      expect((await call('GET', '/v1/agents', { key: created.api_key })).status).to.equal(200);
      const patch = await call('PATCH', '/v1/agents/none', { key: standard.api_key, body: { description: 'x' } });
      expect(patch.status).to.equal(403);
    }
  });

  it('exits 2 with usage on an unknown command or tenant', async () => {
    const env = cliEnv();
    for (const args of [['tenant'], ['key', 'create', '--tenant', 'ten_missing']]) {
      const error = await run('node', [CLI, ...args], { env }).then(() => undefined, (err: { code: number; stderr: string }) => err);
      expect(error?.code, args.join(' ')).to.equal(2);
      expect(error?.stderr).to.include('usage:');
    }
  });
});
