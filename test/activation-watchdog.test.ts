import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { createWorkflowWorker } from '../workers/activation-watchdog.js';
import { testPlatform } from './support/global.js';
import { installQuietRuntime } from './support/workflow-test-environment.js';

const BLOCKING_WORKFLOW = fileURLToPath(new URL('./support/blocking-workflow.js', import.meta.url));
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** workers/activation-watchdog.ts: how long one workflow activation's JavaScript may run (WORKFLOW_ACTIVATION_TIMEOUT_MS). */
describe('workflow activation watchdog', function () {
  this.timeout(60_000);
  let bundle: WorkflowBundle;
  let connection: NativeConnection;

  before(async () => {
    installQuietRuntime();
    bundle = await bundleWorkflowCode({ workflowsPath: BLOCKING_WORKFLOW, logger: silent });
    connection = await NativeConnection.connect({ address: testPlatform().temporalAddress });
  });

  after(async () => {
    await connection?.close();
  });

  /** Runs `body` while a worker made as the platform makes them, with `env`, polls a task queue of its own. */
  async function withWorker(env: NodeJS.ProcessEnv, body: (taskQueue: string) => Promise<void>): Promise<void> {
    const taskQueue = `activation-watchdog-${randomUUID()}`;
    const worker = await createWorkflowWorker({ connection, namespace: testPlatform().temporal.options.namespace, taskQueue, workflowBundle: bundle }, env);
    await worker.runUntil(() => body(taskQueue));
  }

  const start = (taskQueue: string, ms: number) =>
    testPlatform().temporal.workflow.start('holdThread', { taskQueue, workflowId: `hold-${randomUUID()}`, args: [ms], workflowExecutionTimeout: '1 minute' });

  it("sets no limit by default: an activation that holds its thread past the SDK's own 5 s completes", async () => {
    await withWorker({}, async (taskQueue) => {
      expect(await (await start(taskQueue, 5_500)).result()).to.equal('held 5500 ms');
    });
  });

  it('with WORKFLOW_ACTIVATION_TIMEOUT_MS, interrupts an activation that outlasts it (its workflow task fails) and goes on with other workflows', async () => {
    await withWorker({ WORKFLOW_ACTIVATION_TIMEOUT_MS: '200' }, async (taskQueue) => {
      const stuck = await start(taskQueue, 3_000);
      let failure: string | null | undefined;
      for (const deadline = Date.now() + 15_000; !failure && Date.now() < deadline; await sleep(50)) {
        const events = (await stuck.fetchHistory()).events ?? [];
        failure = events.find((event) => event.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message;
      }
      expect(failure).to.match(/timed out after 200ms/);
      expect(await (await start(taskQueue, 10)).result()).to.equal('held 10 ms');
      await stuck.terminate('test over');
    });
  });
});
