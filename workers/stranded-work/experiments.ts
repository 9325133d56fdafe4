import { startExperimentWorkflow } from '../../activities/evals/start-experiment-workflow.js';
import { endUnstartedExperiment } from '../../activities/evals/unstarted-experiment.js';
import { listStrandedExperiments } from '../../db/experiments.js';
import type { StrandedWorkKind } from './kind.js';

/** An experiment recorded just before its API stopped (a start Temporal refused ends it `failed` at once: activities/evals/start-experiment-workflow.ts). */
export const strandedExperiments: StrandedWorkKind = {
  name: 'experiments',
  list: async (db, query) =>
    (await listStrandedExperiments(db, query)).map((experiment) => ({
      id: experiment.id,
      workflowId: experiment.id,
      tooLate: experiment.too_late,
      overdue: experiment.overdue,
      start: (temporal) => startExperimentWorkflow(temporal, experiment),
      giveUp: (deps, reason) => endUnstartedExperiment(deps, { tenantId: experiment.tenant_id, experimentId: experiment.id }, reason),
    })),
};
