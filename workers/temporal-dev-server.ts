import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import YAML from 'yaml';
import { findTemporalCli, temporalCliMissingMessage } from './temporal-cli.js';
import { integerSetting } from '../db/integer-settings.js';

/** temporal-dev.yaml, with the environment's port overrides applied. */
export interface TemporalDevConfig {
  ip: string;
  port: number;
  ui_port: number;
  namespace: string;
  /** Relative to the data dir; null keeps the store in memory. */
  db_file: string | null;
  log_level: string;
  search_attributes: Record<string, string>;
  dynamic_config: Record<string, unknown>;
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  namespace: string;
  stop(): Promise<void>;
}

const CONFIG_FILE = fileURLToPath(new URL('../../temporal-dev.yaml', import.meta.url));
const READY_TIMEOUT_MS = 90_000;

export function loadTemporalDevConfig(env: NodeJS.ProcessEnv = process.env): TemporalDevConfig {
  const config = YAML.parse(fs.readFileSync(CONFIG_FILE, 'utf8')) as TemporalDevConfig;
  config.port = integerSetting('TEMPORAL_DEV_PORT', env) ?? config.port;
  config.ui_port = integerSetting('TEMPORAL_DEV_UI_PORT', env) ?? config.ui_port;
  return config;
}

/** The `temporal server start-dev` flags for a configuration. */
export function startDevArgs(config: TemporalDevConfig, dataDir: string): string[] {
  const args = ['server', 'start-dev', '--ip', config.ip, '--port', String(config.port), '--ui-port', String(config.ui_port)];
  args.push('--namespace', config.namespace, '--log-level', config.log_level, '--color', 'never');
  if (config.db_file) args.push('--db-filename', path.resolve(dataDir, config.db_file));
  for (const [name, type] of Object.entries(config.search_attributes)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(config.dynamic_config)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

/**
 * Starts the Temporal CLI dev server (Web UI included) as a child process and waits until its namespace
 * answers. The child's output goes to `temporal-dev.log` in the data dir.
 */
export async function startTemporalDevServer(config: TemporalDevConfig, dataDir: string): Promise<TemporalDevServer> {
  const address = `${config.ip}:${config.port}`;
  if (await isPortOpen(config.ip, config.port)) {
    throw new Error(`port ${address} is already in use; stop what listens there, set TEMPORAL_DEV_PORT, or set TEMPORAL_ADDRESS to use it`);
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const cli = await findTemporalCli();
  if (!cli) return startWithSdkDownload(config, dataDir);

  const log = fs.openSync(path.join(dataDir, 'temporal-dev.log'), 'a');
  const child = spawn(cli, startDevArgs(config, dataDir), { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    await waitUntilReady(address, config.namespace, exited);
  } catch (err) {
    child.kill('SIGKILL');
    const logFile = path.join(dataDir, 'temporal-dev.log');
    throw new Error(`${(err as Error).message} (see ${logFile}); it ended with:\n${lastLines(logFile, 15)}`, { cause: err });
  }
  return {
    address,
    uiUrl: `http://${config.ip}:${config.ui_port}`,
    namespace: config.namespace,
    stop: () => stopChild(child, exited),
  };
}

/** The last `count` lines of a log, for an error that names it (its directory may be gone by the time it is read). */
function lastLines(file: string, count: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitUntilReady(address: string, namespace: string, exited: Promise<number | null>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let childExit: number | null | undefined;
  void exited.then((code) => (childExit = code));
  while (Date.now() < deadline) {
    if (childExit !== undefined) throw new Error(`the Temporal dev server exited with code ${childExit} while starting`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address} within ${READY_TIMEOUT_MS / 1000} s`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(resolve, 10_000, 'timeout').unref());
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The last resort: the SDK downloads a dev server itself (needs internet, which some machines lack). */
async function startWithSdkDownload(config: TemporalDevConfig, dataDir: string): Promise<TemporalDevServer> {
  console.log('[temporal] no Temporal CLI found; trying the SDK download of a dev server...');
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download' },
        ip: config.ip,
        port: config.port,
        ui: true,
        uiPort: config.ui_port,
        namespace: config.namespace,
        ...(config.db_file && { dbFilename: path.resolve(dataDir, config.db_file) }),
        extraArgs: startDevArgs(config, dataDir).filter((arg, i, all) => all[i - 1] === '--dynamic-config-value' || arg === '--dynamic-config-value'),
        searchAttributes: [],
      },
    });
    for (const [name, type] of Object.entries(config.search_attributes)) {
      await env.connection.operatorService
        .addSearchAttributes({ namespace: config.namespace, searchAttributes: { [name]: searchAttributeTypeCode(type) } })
        .catch(() => undefined);
    }
    return {
      address: `${config.ip}:${config.port}`,
      uiUrl: `http://${config.ip}:${config.ui_port}`,
      namespace: config.namespace,
      stop: () => env.teardown(),
    };
  } catch (err) {
    throw new Error(`${temporalCliMissingMessage()}\n(SDK download failed: ${(err as Error).message})`, { cause: err });
  }
}

function searchAttributeTypeCode(type: string): number {
  // temporal.api.enums.v1.IndexedValueType
  const codes: Record<string, number> = { Text: 1, Keyword: 2, Int: 3, Double: 4, Bool: 5, Datetime: 6, KeywordList: 7 };
  return codes[type] ?? 2;
}

function isPortOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
