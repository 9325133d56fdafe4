import { objectSchema, type WorkflowBuiltinTool } from './definition.js';
import { verifyPlan } from './plan.js';

export const verifyPlanTool: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description: 'Report the plan: which steps are done, which are pending, and whether all are done.',
  parameters: objectSchema({}, []),
  async run(_args, run) {
    return verifyPlan(run.plan());
  },
};
