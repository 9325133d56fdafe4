import { objectSchema, type UnavailableBuiltinTool } from './definition.js';

/** Ships with skills (a later issue). */
export const listSkills: UnavailableBuiltinTool = {
  runsIn: 'unavailable',
  description: 'List the skills this agent can use.',
  parameters: objectSchema({}, []),
};
