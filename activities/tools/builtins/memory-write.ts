import { objectSchema, requireString, type ActivityBuiltinTool } from './definition.js';

export const memoryWrite: ActivityBuiltinTool = {
  runsIn: 'activity',
  description: 'Store a fact in long-term memory.',
  parameters: objectSchema({ content: { type: 'string' } }, ['content']),
  async run(args, context) {
    return { id: (await context.writeMemory(requireString(args, 'content'))).id };
  },
};
