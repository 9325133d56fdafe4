import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Platform } from '../../workers/platform.js';
import { startWorkers, type RunningWorkers } from '../../workers/workers.js';

/**
 * The workers of the test run. On Postgres they are a real worker process (`node dist/workers/main.js`),
 * so tests can SIGKILL it mid-activity and start another; embedded PGlite belongs to the test process,
 * so there they run in-process and can only be stopped and started cleanly.
 */
export interface TestWorkers {
  /** True when the workers are a process of their own that can be killed. */
  readonly separateProcess: boolean;
  /** Starts them; `env` adds to their environment. */
  start(env?: Record<string, string>): Promise<void>;
  /** Stops them: a clean shutdown in-process, SIGKILL for a worker process. */
  stop(): Promise<void>;
}

export function testWorkers(platform: Platform): TestWorkers {
  return platform.databaseKind === 'postgres' ? new WorkerProcess(platform) : new InProcessWorkers(platform);
}

class InProcessWorkers implements TestWorkers {
  readonly separateProcess = false;
  private running: RunningWorkers | undefined;

  constructor(private readonly platform: Platform) {}

  async start(env: Record<string, string> = {}): Promise<void> {
    const { temporal } = this.platform;
    this.running = await startWorkers({
      address: this.platform.temporalAddress,
      namespace: temporal.options.namespace,
      db: this.platform.db,
      bundle: await this.platform.workflowBundle(),
      env: { ...process.env, ...env },
    });
  }

  async stop(): Promise<void> {
    await this.running?.shutdown();
    this.running = undefined;
  }
}

class WorkerProcess implements TestWorkers {
  readonly separateProcess = true;
  private child: ChildProcess | undefined;

  constructor(private readonly platform: Platform) {}

  async start(env: Record<string, string> = {}): Promise<void> {
    const child = spawn(process.execPath, [path.resolve('dist/workers/main.js')], {
      env: { ...process.env, ...env, TEMPORAL_ADDRESS: this.platform.temporalAddress, TEMPORAL_NAMESPACE: this.platform.temporal.options.namespace },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    // The worker says it is polling once every queue has a worker; wait for that line.
    await new Promise<void>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('[worker] polling')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the worker process exited with ${code} before polling:\n${output}`)));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }
}
