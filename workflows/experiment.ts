import {
  CancellationScope,
  ParentClosePolicy,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PendingCell } from '../db/experiment-cells.js';
import { EXPERIMENT_CELL_WORKFLOW_TYPE, EXPERIMENT_TASK_QUEUE, setConcurrencySignal, type ExperimentInput } from './experiment-api.js';
import { runExperimentCell, type experimentCell } from './experiment-cell.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { failureMessageWithRetries } from './failures.js';

/**
 * Short, idempotent database work: local activities, without a round trip through the server each (as in
 * experiment-cell.ts). Retried for minutes, not forever (bookkeeping-retry.ts): a cell whose step gives up
 * is recorded broken, and an experiment whose own step gives up ends failed.
 */
const bookkeeping = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: BOOKKEEPING_RETRY,
});

/**
 * Cells started by one run of the workflow before it continues as new, unless the input says otherwise.
 * Each cell adds about ten events (two local activity markers, its run's child initiated, started and
 * completed, and its share of workflow tasks); 500 keeps a history of a few thousand events, far under Temporal's 50k limit, however many cells the experiment has.
 */
export const DEFAULT_CELLS_PER_WORKFLOW_RUN = 500;
/** Pending cells read from Postgres at a time. */
const PAGE_SIZE = 64;

/**
 * One experiment: starts its pending cells in order, at most `concurrency` at a time, each running its
 * agent run as a child of this workflow and scoring it (experiment-cell.ts). Cancellation stops the
 * starting; the cells already started finish (they run outside the cancelled scope), then the rest are
 * skipped and the experiment ends `cancelled`.
 *
 * Why no workflow per cell: a cell is a run plus a little bookkeeping, and a workflow of its own between
 * the two (a workflow start, its tasks and its history per cell) held cells to 0.70-0.73x the rate of
 * bare runs at concurrency 8 on 2 cores; run here, a cell's steps share this workflow's tasks with the
 * other cells in flight, and cells go at 0.86-0.87x (docs/evals.md "Benchmark").
 */
export async function experiment(input: ExperimentInput): Promise<void> {
  const state = new ExperimentState(input);
  setHandler(setConcurrencySignal, (concurrency) => state.setConcurrency(concurrency));
  return state.execute();
}

class ExperimentState {
  private concurrency: number;
  private afterSeq: number;
  private readonly queue: PendingCell[] = [];
  private readonly running = new Set<string>();
  private startedHere = 0;

  constructor(private readonly input: ExperimentInput) {
    this.concurrency = input.concurrency;
    this.afterSeq = input.resumeAfterSeq ?? 0;
  }

  setConcurrency(concurrency: number): void {
    this.concurrency = concurrency;
  }

  async execute(): Promise<void> {
    const ref = { tenantId: this.input.tenantId, experimentId: this.input.experimentId };
    let outcome: 'done' | 'continue';
    try {
      if (this.input.resumeAfterSeq === undefined && !(await bookkeeping.beginExperiment(ref))) return;
      outcome = await this.startCells();
      if (outcome === 'done') await bookkeeping.finishExperiment({ ...ref, status: 'completed' });
    } catch (err) {
      if (isCancellation(err)) {
        await CancellationScope.nonCancellable(async () => {
          await this.allCellsSettled();
          await bookkeeping.finishExperiment({ ...ref, status: 'cancelled' });
        });
        throw err;
      }
      await CancellationScope.nonCancellable(async () => {
        // Its cells would be terminated with it, their runs left running: let them end first.
        await this.allCellsSettled();
        await bookkeeping.finishExperiment({ ...ref, status: 'failed', error: { code: 'experiment_error', message: failureMessageWithRetries(err) } });
      });
      throw err;
    }
    // Outside the try: continuing as new is done by throwing, and that is not the experiment failing.
    if (outcome === 'continue') {
      await continueAsNew<typeof experiment>({ ...this.input, concurrency: this.concurrency, resumeAfterSeq: this.afterSeq });
    }
  }

  /** Starts cells until none are pending ('done') or this run of the workflow has started its share ('continue'). */
  private async startCells(): Promise<'done' | 'continue'> {
    for (;;) {
      await condition(() => this.running.size < this.concurrency);
      if (this.queue.length === 0) {
        this.queue.push(...(await bookkeeping.listPendingCells({ ...this.input, afterSeq: this.afterSeq, limit: PAGE_SIZE })));
      }
      const next = this.queue.shift();
      if (next === undefined) {
        await this.allCellsSettled();
        return 'done';
      }
      if (this.startedHere >= (this.input.cellsPerWorkflowRun ?? DEFAULT_CELLS_PER_WORKFLOW_RUN) || workflowInfo().continueAsNewSuggested) {
        await this.allCellsSettled();
        return 'continue';
      }
      this.afterSeq = next.seq;
      this.startedHere += 1;
      this.startCell(next.id);
    }
  }

  private startCell(cellId: string): void {
    this.running.add(cellId);
    const cell = { tenantId: this.input.tenantId, experimentId: this.input.experimentId, cellId };
    // Outside the experiment's cancellation scope: a cancelled experiment lets its running cells finish.
    CancellationScope.nonCancellable(() =>
      patched('experiment-cells-inline')
        ? runExperimentCell(cell)
        : executeChild<typeof experimentCell>(EXPERIMENT_CELL_WORKFLOW_TYPE, {
            workflowId: cellId,
            taskQueue: EXPERIMENT_TASK_QUEUE,
            args: [cell],
            parentClosePolicy: ParentClosePolicy.TERMINATE,
          }),
    )
      .catch(async (err: unknown) => {
        // A cell records its own failures; this is a cell that broke (a bug, or a step that gave up its
        // retries), recorded so the experiment can end.
        const message = failureMessageWithRetries(err);
        log.error('experiment cell failed', { cellId, error: message });
        await CancellationScope.nonCancellable(() => bookkeeping.recordBrokenCell({ ...cell, message })).catch((recordErr: unknown) => {
          // The database has been gone for minutes: the cell stays as it was, and the experiment goes on.
          log.error('could not record a broken experiment cell', { cellId, error: failureMessageWithRetries(recordErr) });
        });
      })
      .finally(() => this.running.delete(cellId));
  }

  private allCellsSettled(): Promise<void> {
    return condition(() => this.running.size === 0);
  }
}
