import type { ActivityDeps } from '../deps.js';
import type { StepInput } from '../runs/types.js';
import { executeTool } from './execute-tool.js';

/** The `agentRun` workflow's tool calls that need I/O (the rest run in the workflow itself). */
export function toolActivities(deps: ActivityDeps) {
  return {
    executeTool: (step: StepInput) => executeTool(deps.db, deps, step),
  };
}
