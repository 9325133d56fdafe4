import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import type { Experiment } from '../../db/schema.js';
import { EXPERIMENT_TASK_QUEUE, EXPERIMENT_WORKFLOW_TYPE } from '../../workflows/experiment-api.js';
import type { experiment as experimentWorkflow } from '../../workflows/experiment.js';
import { AgentIdAttribute, ExperimentIdAttribute, TenantIdAttribute } from '../../workflows/search-attributes.js';
import { startRecordedWork } from '../start-recorded-work.js';
import { endUnstartedExperiment } from './unstarted-experiment.js';
import { integerSetting } from '../../db/integer-settings.js';
import { tenantFairness } from '../tenant-fairness.js';

/** What an experiment's workflow is started with. */
type ExperimentToStart = Pick<Experiment, 'id' | 'tenant_id' | 'agent_id' | 'concurrency'>;

/**
 * Starts the experiment's workflow: id = experiment id, findable in the Temporal UI by tenant, agent and
 * experiment. Throws WorkflowExecutionAlreadyStartedError while Temporal holds a workflow of that id,
 * running or closed: an experiment runs once, however many times its start is asked for (the API, the
 * stranded-work sweep, which asks only in the first 50 minutes).
 */
export async function startExperimentWorkflow(temporal: Client, experiment: ExperimentToStart): Promise<void> {
  await temporal.workflow.start<typeof experimentWorkflow>(EXPERIMENT_WORKFLOW_TYPE, {
    workflowId: experiment.id,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    taskQueue: EXPERIMENT_TASK_QUEUE,
    args: [{ tenantId: experiment.tenant_id, experimentId: experiment.id, concurrency: experiment.concurrency, cellsPerWorkflowRun: cellsPerWorkflowRun() }],
    typedSearchAttributes: [
      { key: TenantIdAttribute, value: experiment.tenant_id },
      { key: AgentIdAttribute, value: experiment.agent_id },
      { key: ExperimentIdAttribute, value: experiment.id },
    ],
    priority: tenantFairness(experiment.tenant_id),
  });
}

/**
 * Starts a just-recorded experiment's workflow, or, when Temporal refused the start and has no such
 * workflow, ends the experiment `failed` and throws WorkNotStartedError (activities/start-recorded-work.ts).
 */
export async function startExperimentOrEndIt(deps: { db: Db; temporal: Client }, experiment: ExperimentToStart): Promise<void> {
  await startRecordedWork({
    temporal: deps.temporal,
    workflowId: experiment.id,
    what: 'experiment',
    start: () => startExperimentWorkflow(deps.temporal, experiment),
    endUnstarted: (message) => endUnstartedExperiment(deps, { tenantId: experiment.tenant_id, experimentId: experiment.id }, message),
  });
}

/** EXPERIMENT_CELLS_PER_WORKFLOW_RUN: how often an experiment's workflow continues as new (workflows/experiment.ts). */
function cellsPerWorkflowRun(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return integerSetting('EXPERIMENT_CELLS_PER_WORKFLOW_RUN', env);
}
