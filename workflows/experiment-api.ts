import { defineSignal } from '@temporalio/workflow';
import { TASK_QUEUES } from './task-queues.js';

/**
 * The experiment workflows' contract: `experiment` (workflow id = experiment id) runs an experiment's
 * cells, each as an `agentRun` child (workflow id = run id) that it then scores. (`experimentCell`, a
 * workflow per cell, is how experiments started before the 'experiment-cells-inline' patch ran them.) Start it with `client.workflow.start<typeof experiment>(EXPERIMENT_WORKFLOW_TYPE, …)`
 * through a type-only import. Cancelling the workflow cancels the experiment: cells not yet started are
 * skipped, cells already running finish and count.
 */

export const EXPERIMENT_WORKFLOW_TYPE = 'experiment';
export const EXPERIMENT_CELL_WORKFLOW_TYPE = 'experimentCell';
export const EXPERIMENT_TASK_QUEUE = TASK_QUEUES.evals;

/** Cells that run at once: 4 unless the experiment says otherwise, never more than 32. */
export const DEFAULT_EXPERIMENT_CONCURRENCY = 4;
export const MAX_EXPERIMENT_CONCURRENCY = 32;

export interface ExperimentInput {
  tenantId: string;
  experimentId: string;
  concurrency: number;
  /**
   * Set when the workflow continues as new: the last cell started (cells go in `seq` order). Everything
   * else the experiment knows is in Postgres, so the history of each run of the workflow stays short.
   */
  resumeAfterSeq?: number;
  /** Cells one run of the workflow starts before it continues as new; default 500 (EXPERIMENT_CELLS_PER_WORKFLOW_RUN). */
  cellsPerWorkflowRun?: number;
}

export interface ExperimentCellInput {
  tenantId: string;
  experimentId: string;
  cellId: string;
}

/** A new concurrency for the cells not yet started (PATCH /v1/evals/experiments/{id}). */
export const setConcurrencySignal = defineSignal<[number]>('setConcurrency');
