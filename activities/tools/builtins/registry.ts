import { askHuman } from './ask-human.js';
import { calculator } from './calculator.js';
import type { BuiltinTool } from './definition.js';
import { knowledgeSearch } from './knowledge-search.js';
import { listSkills } from './list-skills.js';
import { memorySearch } from './memory-search.js';
import { memoryWrite } from './memory-write.js';
import { planWrite } from './plan-write.js';
import { useSkill } from './use-skill.js';
import { verifyPlanTool } from './verify-plan.js';
import { waitUntil } from './wait-until.js';

/**
 * Every built-in tool a catalog entry of kind `builtin` can name, by key, in the order the API lists
 * them. Adding one is a file in this folder and a line here: the catalog's enum, the run plan, the
 * workflow (for `runsIn: 'workflow'`) and the `executeTool` activity (for `runsIn: 'activity'`) all
 * read this table.
 */
export const BUILTIN_TOOLS = {
  calculator,
  ask_human: askHuman,
  wait_until: waitUntil,
  plan_write: planWrite,
  verify_plan: verifyPlanTool,
  knowledge_search: knowledgeSearch,
  memory_search: memorySearch,
  memory_write: memoryWrite,
  list_skills: listSkills,
  use_skill: useSkill,
} as const satisfies Record<string, BuiltinTool>;

export type BuiltinKey = keyof typeof BUILTIN_TOOLS;
export const BUILTIN_KEYS = Object.keys(BUILTIN_TOOLS) as BuiltinKey[];

/** The built-in tool by that key, or undefined. */
export function builtinTool(key: string | null | undefined): BuiltinTool | undefined {
  return key && Object.hasOwn(BUILTIN_TOOLS, key) ? BUILTIN_TOOLS[key as BuiltinKey] : undefined;
}
