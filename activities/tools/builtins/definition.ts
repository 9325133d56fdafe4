import type { JsonSchema } from '../../json-schema/types.js';
import type { KnowledgeHit } from '../../knowledge/search.js';
import type { MemoryHit } from '../../memory/memory.js';
import type { PlanStep } from './plan.js';

/**
 * How one built-in tool works: what the model is told (description, argument schema), who runs it, and
 * the implementation. Files of this folder are bundled into the workflow code (the workflow runs the
 * `workflow` tools itself), so they import only pure code and types: what an activity tool does with
 * the outside world reaches it through `ActivityToolContext`.
 */
export type BuiltinTool = WorkflowBuiltinTool | ActivityBuiltinTool;

interface BuiltinToolBase {
  description: string;
  parameters: JsonSchema;
}

/** Changes the run itself (pauses, timers, the plan), so the workflow runs it: deterministic code only. */
export interface WorkflowBuiltinTool extends BuiltinToolBase {
  runsIn: 'workflow';
  run(args: Record<string, unknown>, run: WorkflowToolContext): Promise<unknown>;
}

/** Does I/O, so the `executeTool` activity runs it. */
export interface ActivityBuiltinTool extends BuiltinToolBase {
  runsIn: 'activity';
  run(args: Record<string, unknown>, context: ActivityToolContext): Promise<unknown>;
}

/** What a workflow tool may do to the run it belongs to (workflows/agent-run.ts provides it). */
export interface WorkflowToolContext {
  /** The step's index in the run, unique per tool call. */
  stepIndex: number;
  /** Shows the question on the run, pauses until the `answer` update, and answers with the answer. */
  askHuman(questionId: string, question: string): Promise<string>;
  /** The plan kept in workflow state (`plan_write` replaces it, `verify_plan` reports it). */
  plan(): PlanStep[];
  replacePlan(plan: PlanStep[]): void;
  /** The skills of the step's node (`list_skills`, `use_skill`; activities/tools/builtins/skill-session.ts). */
  skills: NodeSkills;
}

/** What a node's skills offer its tools. */
export interface NodeSkills {
  /** The skills the node may load, with whether each is loaded. */
  list(): Array<{ name: string; description: string; version: number; loaded: boolean }>;
  /** Loads the skill: its instructions join the conversation, its tools the node's. Throws when the node may not use it. */
  use(name: string): Promise<Record<string, unknown>>;
}

/** What an activity tool reaches, bound to the run's tenant (activities/tools/execute-tool.ts provides it). */
export interface ActivityToolContext {
  signal: AbortSignal;
  writeMemory(content: string): Promise<{ id: string }>;
  searchMemory(query: string, k: number): Promise<MemoryHit[]>;
  /** The id of the knowledge base with that id or name (id first), or undefined when there is none. */
  findKnowledgeBase(ref: string): Promise<string | undefined>;
  searchKnowledge(query: { query: string; kbId?: string; k: number }): Promise<KnowledgeHit[]>;
}

/** An object schema that takes exactly the given properties. */
export function objectSchema(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

export function requireString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || !value) throw new Error(`this tool needs a string "${name}"`);
  return value;
}
