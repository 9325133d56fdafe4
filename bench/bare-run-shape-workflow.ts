import { proxyActivities } from '@temporalio/workflow';
import type { bareRunShapeActivities } from './bare-run-shape.js';

const { bareStep } = proxyActivities<ReturnType<typeof bareRunShapeActivities>>({ startToCloseTimeout: '1 minute' });

/**
 * A benchmark baseline (bench/bare-run-shape.ts): the shape of the runs benchmark's agent run — a
 * model turn, a tool call, a model turn — as three activities in a row on a bare Temporal worker.
 */
export async function bareRunShape(): Promise<number> {
  let steps = 0;
  for (let i = 0; i < 3; i++) steps += await bareStep();
  return steps;
}
