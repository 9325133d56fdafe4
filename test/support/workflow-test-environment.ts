import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, IllegalStateError } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type LogLevel, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';
import { testPlatform } from './global.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('../../workflows/index.js', import.meta.url));
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** A child workflow as its parent's history records it. */
export interface ChildWorkflow {
  workflowId: string;
  workflowType: string;
  taskQueue: string;
  args: unknown[];
}

/**
 * Workflow tests in the style of the Temporal samples (a test workflow environment, a real worker running
 * the real workflow code, mocked activities), on the suite's own Temporal server: `createLocal()` would
 * download one. Each worker polls a task queue of its own, so the platform's workers never see the
 * workflows under test; the workflow code is bundled once per environment, so a test's worker starts in
 * a fraction of a second.
 */
export class WorkflowTestEnvironment {
  private readonly started: string[] = [];

  private constructor(
    private readonly env: TestWorkflowEnvironment,
    private readonly bundle: WorkflowBundle,
  ) {}

  static async open(): Promise<WorkflowTestEnvironment> {
    installQuietRuntime();
    const { temporalAddress, temporal } = testPlatform();
    const [env, bundle] = await Promise.all([
      TestWorkflowEnvironment.createFromExistingServer({ address: temporalAddress, namespace: temporal.options.namespace }),
      bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silent }),
    ]);
    return new WorkflowTestEnvironment(env, bundle);
  }

  /**
   * Runs `body` while a worker with these activities polls a fresh task queue; then ends whatever the
   * body's workflows left running, their abandoned children included (see `start`).
   */
  async withWorker<T>(activities: Partial<Activities>, body: (taskQueue: string) => Promise<T>, options: Partial<WorkerOptions> = {}): Promise<T> {
    const taskQueue = `workflow-test-${randomUUID()}`;
    const worker = await Worker.create({
      ...options,
      connection: this.env.nativeConnection,
      namespace: this.env.namespace,
      taskQueue,
      workflowBundle: this.bundle,
      activities,
      // Heartbeats carry cancellation to an activity; sent every 50 ms rather than every 4 s (80% of the
      // heartbeat timeout), a cancelled one hears of it at once.
      maxHeartbeatThrottleInterval: '50 milliseconds',
      defaultHeartbeatThrottleInterval: '50 milliseconds',
      // A test that fails while a mock waits on a gate must not wait for that activity at shutdown.
      shutdownForceTime: '2 seconds',
    });
    // Leftovers end while the worker still runs, so a child on this task queue can still finish.
    return worker.runUntil(async () => {
      try {
        return await body(taskQueue);
      } finally {
        await this.endLeftovers();
      }
    });
  }

  /** Starts a workflow and remembers it, so that it and its children end with the test. */
  async start<T extends WorkflowHandle>(start: (client: TestWorkflowEnvironment['client']) => Promise<T>): Promise<T> {
    const handle = await start(this.env.client);
    this.started.push(handle.workflowId);
    return handle;
  }

  /** The children a workflow started, read from its history. */
  async childrenOf(workflowId: string): Promise<ChildWorkflow[]> {
    const history = await this.env.client.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).flatMap((event) => {
      const child = event.startChildWorkflowExecutionInitiatedEventAttributes;
      if (!child) return [];
      return [{
        workflowId: child.workflowId ?? '',
        workflowType: child.workflowType?.name ?? '',
        taskQueue: child.taskQueue?.name ?? '',
        args: (child.input?.payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload)),
      }];
    });
  }

  async teardown(): Promise<void> {
    await this.env.teardown();
  }

  /**
   * Children started with ParentClosePolicy.ABANDON outlive their parent and may run on the platform's
   * own task queues, against records the test never made; left alone they would retry there for the rest
   * of the suite. Each is terminated once no worker holds a task of it, so none reports a task that
   * vanished under it.
   */
  private async endLeftovers(): Promise<void> {
    const parents = this.started.splice(0);
    // Parents first, so none starts another child once its children are read.
    await Promise.all(parents.map((id) => this.terminateWhenIdle(id)));
    const children = await Promise.all(parents.map((id) => this.childrenOf(id).catch(() => [])));
    await Promise.all(children.flat().map((child) => this.terminateWhenIdle(child.workflowId)));
  }

  private async terminateWhenIdle(workflowId: string): Promise<void> {
    const handle = this.env.client.workflow.getHandle(workflowId);
    const deadline = Date.now() + IDLE_WAIT_MS;
    for (;;) {
      const description = await handle.describe().catch(() => undefined);
      if (description?.status.name !== 'RUNNING') return;
      const { pendingWorkflowTask, pendingActivities } = description.raw;
      // Idle: no workflow task, and every activity waits out a retry's backoff (scheduled after a failure).
      const idle = !pendingWorkflowTask && (pendingActivities ?? []).every((activity) => activity.state === ACTIVITY_SCHEDULED && activity.lastFailure);
      if (idle || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await handle.terminate('the workflow test is over').catch(() => undefined);
  }
}

const IDLE_WAIT_MS = 5000;
/** temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED */
const ACTIVITY_SCHEDULED = 1;

/**
 * Without workers of its own in this process (the Postgres runs), the SDK's default runtime would log
 * every worker's start and stop at INFO; log what the platform's workers log.
 */
export function installQuietRuntime(): void {
  const level = (process.env.TEMPORAL_LOG_LEVEL?.toUpperCase() ?? 'WARN') as LogLevel;
  try {
    Runtime.install({ logger: new DefaultLogger(level) });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err; // already running: the platform's workers installed it
  }
}
