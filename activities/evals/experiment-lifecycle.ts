import type { Db } from '../../db/database.js';
import { countCellsByStatus, findCell, listPendingCells, recordCellResult, skipPendingCells, type PendingCell } from '../../db/experiment-cells.js';
import { appendExperimentEvents } from '../../db/experiment-events.js';
import { markExperimentEnded, markExperimentRunning } from '../../db/experiments.js';
import type { ExperimentStatus, RunError } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { cellEndEvent } from './cell-events.js';
import { failedBeforeRun } from './cell-run.js';

/**
 * The experiment record's transitions, each with its event in the same transaction. Events carry dedupe
 * keys and transitions are conditional on the current status, so retried activities change nothing twice.
 */

export interface ExperimentRef {
  tenantId: string;
  experimentId: string;
}

/**
 * queued → running. Answers whether the workflow should run the experiment: false when its record is gone
 * (its agent was deleted) or has already ended (recorded failed by an API that could not tell the start
 * had worked, or cancelled before the workflow began).
 */
export async function beginExperiment(db: Db, ref: ExperimentRef): Promise<boolean> {
  return withTenant(db, ref.tenantId, async (tx) => {
    const status = await markExperimentRunning(tx, ref.tenantId, ref.experimentId);
    if (status !== 'running') return false;
    await appendExperimentEvents(tx, ref.tenantId, ref.experimentId, [
      { type: 'experiment.started', dedupeKey: 'experiment.started', data: { experiment_id: ref.experimentId } },
    ]);
    return true;
  });
}

/** The next pending cells after `afterSeq`, in the order they are started. */
export async function nextPendingCells(db: Db, ref: ExperimentRef & { afterSeq: number; limit: number }): Promise<PendingCell[]> {
  return withTenant(db, ref.tenantId, (tx) => listPendingCells(tx, ref.tenantId, ref.experimentId, ref.afterSeq, ref.limit));
}

export interface ExperimentEnd extends ExperimentRef {
  status: 'completed' | 'cancelled' | 'failed';
  error?: RunError;
}

/**
 * The end: a cancelled or failed experiment skips the cells it never started; the event carries the final
 * counts. Only from `from` (by default any status before an end); false when it was not there.
 */
export async function finishExperiment(db: Db, end: ExperimentEnd, from?: ExperimentStatus[]): Promise<boolean> {
  return withTenant(db, end.tenantId, async (tx) => {
    const ended = await markExperimentEnded(tx, end.tenantId, end.experimentId, { status: end.status, error: end.error ?? null }, from);
    if (!ended) return false;
    if (end.status !== 'completed') await skipPendingCells(tx, end.tenantId, end.experimentId);
    const counts = (await countCellsByStatus(tx, end.tenantId, [end.experimentId])).get(end.experimentId);
    await appendExperimentEvents(tx, end.tenantId, end.experimentId, [
      {
        type: `experiment.${end.status}`,
        dedupeKey: 'experiment.end',
        data: { experiment_id: end.experimentId, status: end.status, cells: counts, ...(end.error && { error: end.error }) },
      },
    ]);
    return true;
  });
}

/** A cell whose workflow itself broke: failed with the reason, so the experiment can still end. */
export async function recordBrokenCell(db: Db, ref: ExperimentRef & { cellId: string; message: string }): Promise<void> {
  await withTenant(db, ref.tenantId, async (tx) => {
    const cell = await findCell(tx, ref.tenantId, ref.cellId);
    if (!cell) return;
    const result = failedBeforeRun(ref.message);
    if (await recordCellResult(tx, ref.tenantId, ref.cellId, result)) {
      await appendExperimentEvents(tx, ref.tenantId, ref.experimentId, [cellEndEvent(cell, result)]);
    }
  });
}
