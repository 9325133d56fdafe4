import { objectSchema, requireString, type ActivityBuiltinTool } from './definition.js';
import { toolK } from './search-k.js';

export const memorySearch: ActivityBuiltinTool = {
  runsIn: 'activity',
  description: 'Search long-term memory for entries matching a query.',
  parameters: objectSchema({ query: { type: 'string' }, k: { type: 'integer' } }, ['query']),
  async run(args, context) {
    return { hits: await context.searchMemory(requireString(args, 'query'), toolK(args)) };
  },
};
