import { Context } from '@temporalio/activity';
import type { ExperimentCellInput } from '../../workflows/experiment-api.js';
import type { ActivityDeps } from '../deps.js';
import { scoreEvalCell, startEvalCell } from './cell-run.js';
import { emitAfterBookkeeping } from '../webhooks/bookkeeping-emission.js';
import { emitExperimentEnded } from '../webhooks/platform-events.js';
import { beginExperiment, finishExperiment, nextPendingCells, recordBrokenCell, type ExperimentEnd, type ExperimentRef } from './experiment-lifecycle.js';

/** Scoring heartbeats this often, so a judge call that outlives a dead worker is noticed and retried. */
const HEARTBEAT_EVERY_MS = 5_000;

/** The `experiment` and `experimentCell` workflows' steps (workflows/experiment-api.ts). */
export function evalActivities({ db, embedder, temporal }: ActivityDeps) {
  return {
    beginExperiment: (ref: ExperimentRef) => beginExperiment(db, ref),
    listPendingCells: (ref: ExperimentRef & { afterSeq: number; limit: number }) => nextPendingCells(db, ref),
    finishExperiment: async (end: ExperimentEnd) => {
      await finishExperiment(db, end);
      await emitAfterBookkeeping(`experiment.${end.status}`, () => emitExperimentEnded({ db, temporal }, end));
    },
    recordBrokenCell: (ref: ExperimentRef & { cellId: string; message: string }) => recordBrokenCell(db, ref),
    startEvalCell: (input: ExperimentCellInput) => startEvalCell(db, input),
    scoreEvalCell: async (input: ExperimentCellInput) => {
      const context = Context.current();
      // Run as a local activity when no model is asked (workflows/experiment-cell.ts): nothing to heartbeat to.
      const heartbeat = context.info.isLocal ? undefined : setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        await scoreEvalCell({ db, embedder, signal: context.cancellationSignal }, input);
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}
