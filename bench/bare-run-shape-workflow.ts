import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { bareRunShapeActivities } from './bare-run-shape.js';

type BareActivities = ReturnType<typeof bareRunShapeActivities>;
const { bareStep } = proxyActivities<BareActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '1 minute' });

/**
 * A benchmark baseline (bench/bare-run-shape.ts): the shape of the runs benchmark's agent run — a
 * model turn, a tool call, a model turn — as three activities in a row on a bare Temporal worker. (The
 * run's two bookkeeping steps, local activities in this mode, are left out, as this baseline always has.)
 */
export async function bareRunShape(): Promise<number> {
  let steps = 0;
  for (let i = 0; i < 3; i++) steps += await bareStep();
  return steps;
}

/**
 * The same run with `RUN_CALLS=local`: its five steps (the run's beginning, a model turn, a tool call,
 * a model turn, its end) as local activities in a row, all inside one workflow task.
 */
export async function bareRunShapeLocal(): Promise<number> {
  let steps = 0;
  for (let i = 0; i < 5; i++) steps += await local.bareStep();
  return steps;
}
