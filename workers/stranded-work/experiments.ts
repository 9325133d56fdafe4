import { finishExperiment } from '../../activities/evals/experiment-lifecycle.js';
import { startExperimentWorkflow } from '../../activities/evals/start-experiment-workflow.js';
import { emitExperimentEnded } from '../../activities/webhooks/platform-events.js';
import { listStrandedExperiments } from '../../db/experiments.js';
import type { StrandedWorkKind } from './kind.js';

/** An experiment recorded just before its API stopped (a start Temporal refused ends it `failed` at once: api/routes/experiments.ts). */
export const strandedExperiments: StrandedWorkKind = {
  name: 'experiments',
  list: async (db, query) =>
    (await listStrandedExperiments(db, query)).map((experiment) => ({
      id: experiment.id,
      workflowId: experiment.id,
      tooLate: experiment.too_late,
      overdue: experiment.overdue,
      start: (temporal) => startExperimentWorkflow(temporal, experiment),
      giveUp: async (deps, reason) => {
        const end = { tenantId: experiment.tenant_id, experimentId: experiment.id, status: 'failed', error: { code: 'unavailable', message: reason } } as const;
        // Only while still queued: a workflow that began it meanwhile ends it itself.
        if (!(await finishExperiment(deps.db, end, ['queued']))) return false;
        await emitExperimentEnded(deps, end).catch(() => {});
        return true;
      },
    })),
};
