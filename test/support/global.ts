import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newSecretsKeyEntry } from '../../activities/secrets/secrets-key.js';
import { serviceConfigFromEnv } from '../../api/config.js';
import { databaseConfigFromEnv, type DatabaseConfig } from '../../db/config.js';
import { startPlatform, type Platform } from '../../workers/platform.js';
import { startEchoModel } from './echo-model.js';
import { freePort } from './ports.js';
import type { WireServer } from './wire-servers/sse-server.js';
import { testWorkers, type TestWorkers } from './workers.js';

/**
 * The mocha global fixture: one platform for the whole run, as `npm start` builds it. DATABASE_URL and
 * TEMPORAL_ADDRESS pick external servers; otherwise a temporary PGlite and a Temporal dev server
 * (in-memory store) are started and removed afterwards.
 */
let platform: Platform | undefined;
let workers: TestWorkers | undefined;
let echoModel: WireServer | undefined;
let scratchDir: string | undefined;

/** The address tests' HTTP tools may reach: loopback is refused except this one (TOOL_HTTP_ALLOW_HOSTS). */
export const ALLOWED_TOOL_HOST = '127.0.0.2';

export function testWorkerPool(): TestWorkers {
  if (!workers) throw new Error('the test workers are not running');
  return workers;
}

export function testPlatform(): Platform {
  if (!platform) throw new Error('the test platform is not running (is test/support/global.js required by .mocharc?)');
  return platform;
}

export async function mochaGlobalSetup(): Promise<void> {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-test-'));
  // Set before any worker starts (a worker process inherits them): the echo model, and one allowed host.
  echoModel = await startEchoModel();
  process.env.OLLAMA_BASE_URL = echoModel.baseURL;
  process.env.TOOL_HTTP_ALLOW_HOSTS = ALLOWED_TOOL_HOST;
  // Tests and CI run as root, where Chromium's sandbox cannot start; the browser tool refuses root without this.
  if (process.getuid?.() === 0) process.env.CHROMIUM_NO_SANDBOX ??= 'true';
  // As an operator must on Postgres; on PGlite the platform makes its own key in the data directory.
  if (process.env.DATABASE_URL) process.env.SECRETS_KEY ??= newSecretsKeyEntry('test');
  // Runs that fail on purpose would each log a warning; the tests check the failures themselves.
  process.env.TEMPORAL_LOG_LEVEL ??= 'ERROR';
  // test/stranded-work.test.ts sweeps for stranded work when it means to: no sweep of the interval's may
  // take its records first (a worker still sweeps once as it starts).
  process.env.STRANDED_WORK_CHECK_MS ??= String(24 * 60 * 60_000);
  const database: DatabaseConfig = process.env.DATABASE_URL
    ? databaseConfigFromEnv()
    : { kind: 'pglite', dataDir: path.join(scratchDir, 'pglite') };
  const service = { ...serviceConfigFromEnv(), host: '127.0.0.1', port: 0, initWorkspace: 'test-bootstrap', initApiKey: undefined };
  platform = await startPlatform({
    service,
    database,
    dataDir: scratchDir,
    temporalDev: { port: await freePort(), ui_port: await freePort(), db_file: null },
    workers: false,
  });
  workers = testWorkers(platform);
  await workers.start();
  console.log(
    `  test platform: ${platform.databaseKind === 'pglite' ? 'PGlite (embedded)' : 'Postgres (DATABASE_URL)'}, ` +
      `Temporal ${process.env.TEMPORAL_ADDRESS ? `at ${process.env.TEMPORAL_ADDRESS}` : `dev server ${platform.temporalAddress}`}, ` +
      `API ${platform.apiUrl}, workers ${workers.separateProcess ? 'in a process of their own' : 'in-process'}`,
  );
}

export async function mochaGlobalTeardown(): Promise<void> {
  await workers?.stop();
  await platform?.stop();
  await echoModel?.close();
  if (scratchDir) fs.rmSync(scratchDir, { recursive: true, force: true });
}
