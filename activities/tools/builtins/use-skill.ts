import { objectSchema, requireString, type WorkflowBuiltinTool } from './definition.js';

/** Loads one of the node's skills: its instructions join the conversation and its tools become callable. */
export const useSkill: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description:
    'Load a skill by name (list_skills names them). Its instructions are added to the conversation for your next step, and its tools become available.',
  parameters: objectSchema({ name: { type: 'string', description: 'The skill to load, as list_skills names it.' } }, ['name']),
  async run(args, run) {
    return run.skills.use(requireString(args, 'name'));
  },
};
