import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { isDatabaseReachable, type Db } from '../db/database.js';
import type { Platform } from '../workers/platform.js';
import { bundleWorkflows } from '../workers/workers.js';
import type { RunCalls } from '../activities/runs/types.js';
import type { bareRunShape } from './bare-run-shape-workflow.js';

/** The bare worker's own task queue: nothing of the platform polls it. */
const BARE_RUN_SHAPE_TASK_QUEUE = 'bench-bare-run-shape';

const WORKFLOWS_PATH = fileURLToPath(new URL('./bare-run-shape-workflow.js', import.meta.url));

export function bareRunShapeActivities(db: Db) {
  return {
    /** 1 for a step whose database query answered (ping's check), 0 for one whose did not. */
    async bareStep(): Promise<number> {
      return (await isDatabaseReachable(db)) ? 1 : 0;
    },
  };
}

/**
 * The bare workflow of the run's shape as the platform's workers make a run's calls (RUN_CALLS): three
 * activities, or, with local calls, the run's five steps as local activities.
 */
const SHAPES: Record<RunCalls, { subject: string; workflowType: string; steps: number; description: string }> = {
  activities: { subject: 'temporal-execute-run-shape', workflowType: 'bareRunShape', steps: 3, description: 'three activities (each a database query) in a row' },
  local: { subject: 'temporal-execute-local-run-shape', workflowType: 'bareRunShapeLocal', steps: 5, description: 'five local activities (each a database query) in a row, as a run with RUN_CALLS=local makes its steps' },
};

export interface BareRunShapeWorker {
  /** The results' name for it (the local shape has its own: results of the two do not compare) and what it is. */
  readonly subject: string;
  readonly description: string;
  /** workflow.execute of one bare run shape, start to result, in ms; one that outlasts the timeout fails. */
  execute(): Promise<number>;
  /** How many executes so far, and how many of them had their first workflow task in the start's reply. */
  starts(): number;
  eagerStarts(): number;
  stop(): Promise<void>;
}

/**
 * The runs benchmark's second baseline: Temporal running a workflow of a run's shape and nothing of the
 * platform's. An agent run of the benchmark is three activities (two model turns and a tool call) with
 * a workflow task after each; the first baseline, `ping`, is one activity. This one is three, each
 * querying the database once as ping's does (with local calls, the run's five steps as local
 * activities), on a worker of its own (the SDK's defaults, its own task queue) on the same server, so a
 * run's ratio to it is what the platform adds to the work Temporal itself must do for that shape.
 */
export async function startBareRunShapeWorker(platform: Platform, runCalls: RunCalls, timeoutMs: number): Promise<BareRunShapeWorker> {
  const shape = SHAPES[runCalls];
  const connection = await NativeConnection.connect({ address: platform.temporalAddress });
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: platform.temporal.options.namespace,
      taskQueue: BARE_RUN_SHAPE_TASK_QUEUE,
      workflowBundle: await bundleWorkflows(WORKFLOWS_PATH),
      activities: bareRunShapeActivities(platform.db),
    });
  } catch (err) {
    await connection.close();
    throw err;
  }
  // Started as runs are: eagerly, by a client on the connection its worker polls on (activities/eager-start.ts).
  const client = new Client({ connection, namespace: platform.temporal.options.namespace });
  let starts = 0;
  let eagerStarts = 0;
  // A worker that fails mid-benchmark makes its workflows time out; its error is reported by stop().
  const running = worker.run().then(
    () => undefined,
    (err: unknown) => err,
  );
  return {
    subject: shape.subject,
    description: shape.description,
    async execute() {
      const t0 = performance.now();
      const handle = await client.workflow.start<typeof bareRunShape>(shape.workflowType, {
        taskQueue: BARE_RUN_SHAPE_TASK_QUEUE,
        requestEagerStart: true,
        workflowId: `bench-bare-run-shape-${randomUUID()}`,
        workflowExecutionTimeout: timeoutMs,
      });
      starts++;
      if (handle.eagerlyStarted) eagerStarts++;
      const steps = await handle.result();
      if (steps !== shape.steps) throw new Error(`bare run shape: ${steps} steps, not ${shape.steps}`);
      return performance.now() - t0;
    },
    starts: () => starts,
    eagerStarts: () => eagerStarts,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      const failed = await running;
      await connection.close();
      if (failed) throw failed;
    },
  };
}
