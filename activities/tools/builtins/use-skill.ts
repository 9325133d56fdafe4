import { objectSchema, type UnavailableBuiltinTool } from './definition.js';

/** Ships with skills (a later issue). */
export const useSkill: UnavailableBuiltinTool = {
  runsIn: 'unavailable',
  description: 'Load a skill by name.',
  parameters: objectSchema({ name: { type: 'string' } }, ['name']),
};
