import { startAgentRunWorkflow } from '../../activities/runs/start-run-workflow.js';
import { endUnstartedRun } from '../../activities/runs/unstarted-run.js';
import { listStrandedRuns } from '../../db/runs.js';
import type { StrandedWorkKind } from './kind.js';

/** A run the API (or a channel) recorded and then could not start: the process stopped in between. */
export const strandedRuns: StrandedWorkKind = {
  name: 'runs',
  list: async (db, query) =>
    (await listStrandedRuns(db, query)).map((run) => {
      const ref = { tenantId: run.tenant_id, runId: run.id };
      return {
        id: run.id,
        workflowId: run.id,
        tooLate: run.too_late,
        overdue: run.overdue,
        start: (temporal) => startAgentRunWorkflow(temporal, { ...ref, agentId: run.agent_id, source: run.source }),
        giveUp: (deps, reason) => endUnstartedRun(deps, ref, { status: 'failed', error: { code: 'unavailable', message: reason } }),
      };
    }),
};
