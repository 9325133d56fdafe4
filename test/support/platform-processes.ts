import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports.js';

/**
 * The platform's production processes started as children, the way an operator runs them:
 * `node dist/api/server.js` and `node dist/workers/main.js`, configured only by the environment.
 * For tests that run several of each against servers of their own.
 */
export interface PlatformProcess {
  name: string;
  pid: number;
  /** Everything the process printed, for a failing test's message. */
  output(): string;
  /** Whether it exited (by itself: a crash). */
  exited(): boolean;
  stop(): Promise<void>;
}

export interface ApiProcess extends PlatformProcess {
  url: string;
}

export interface ProcessEnv {
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** Anything else, e.g. INIT_API_KEY. */
  extra?: Record<string, string>;
}

const START_TIMEOUT_MS = 120_000;

export async function startApiProcess(name: string, env: ProcessEnv): Promise<ApiProcess> {
  const port = await freePort();
  const child = await spawnUntil(name, 'dist/api/server.js', { ...baseEnv(env), HOST: '127.0.0.1', PORT: String(port) }, '[api] listening on');
  return { ...child, url: `http://127.0.0.1:${port}` };
}

export async function startWorkerProcess(name: string, env: ProcessEnv): Promise<PlatformProcess> {
  return spawnUntil(name, 'dist/workers/main.js', baseEnv(env), '[worker] polling');
}

function baseEnv(env: ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: env.databaseUrl,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_NAMESPACE: env.temporalNamespace,
    ...env.extra,
  };
}

/** Spawns `script` and resolves once it prints `ready` (or rejects with its output when it exits first). */
async function spawnUntil(name: string, script: string, env: NodeJS.ProcessEnv, ready: string): Promise<PlatformProcess> {
  const child = spawn(process.execPath, [path.resolve(script)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    // Keep the tail only: a long test would otherwise hold every log line.
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not print "${ready}" within ${START_TIMEOUT_MS / 1000} s:\n${output}`)), START_TIMEOUT_MS);
    const onData = () => {
      if (output.includes(ready)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${child.exitCode ?? child.signalCode} before "${ready}":\n${output}`));
    });
  });
  return {
    name,
    pid: child.pid!,
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stop: () => stopChild(child, exit),
  };
}

/** SIGTERM (a clean shutdown), then SIGKILL if it has not exited within 10 s. */
async function stopChild(child: ChildProcess, exit: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exit;
  clearTimeout(timer);
}
