import { objectSchema, type WorkflowBuiltinTool } from './definition.js';
import { verifyPlan, writePlan } from './plan.js';

export const planWrite: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description: 'Write (replace) the plan: an ordered list of steps, each with a title and whether it is done.',
  parameters: objectSchema(
    { steps: { type: 'array', items: objectSchema({ title: { type: 'string' }, done: { type: 'boolean' } }, ['title']) } },
    ['steps'],
  ),
  async run(args, run) {
    run.replacePlan(writePlan(args));
    return verifyPlan(run.plan());
  },
};
