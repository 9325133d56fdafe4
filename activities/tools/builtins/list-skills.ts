import { objectSchema, type WorkflowBuiltinTool } from './definition.js';

/** The skills the node may load (its graph's `skills`), with what each is for. */
export const listSkills: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description: 'List the skills you can load with use_skill: each name with a description of what it is for and when to use it.',
  parameters: objectSchema({}, []),
  async run(_args, run) {
    return { skills: run.skills.list() };
  },
};
