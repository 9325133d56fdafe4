import type { ChatMessage, ModelTurnResult, ScriptTurn, ToolCall, TurnUsage } from '../models/types.js';
import type { JsonSchema } from '../json-schema/types.js';
import type { StepEnd } from '../../db/run-steps.js';
import type { TerminalStatus } from '../../db/runs.js';
import type { AgentToolConfig, RunPromptUse, ToolKind } from '../../db/schema.js';
import type { Guardrail } from '../guardrails/index.js';

/**
 * What the agent workflow and its activities pass each other. Workflow code imports these types only;
 * everything here must be plain JSON, since it is recorded in the Temporal history.
 */

export interface RunRef {
  tenantId: string;
  runId: string;
}

/** A tool as a node may call it: catalog identity plus what the model is told. */
export interface PlanTool {
  /** The catalog id; '' for `list_skills` and `use_skill` offered to a node with skills without a catalog entry. */
  id: string;
  name: string;
  kind: ToolKind;
  builtin: string | null;
  description: string;
  parameters: JsonSchema;
  /** Kind `agent`: the subagent it runs (absent on other kinds, and in plans recorded before subagents). */
  agent?: AgentToolConfig;
}

/** One node of the graph, resolved for execution. */
export interface PlanNode {
  id: string;
  model: string;
  system: string | null;
  /** The prompt (and version) the system text came from, if any. */
  prompt: RunPromptUse | null;
  script: ScriptTurn[] | null;
  temperature: number | null;
  maxTurns: number;
  tools: PlanTool[];
  /** The skills the node may load (`use_skill`), versions fixed at the run's start; absent when it lists none. */
  skills?: PlanSkill[];
}

/** A skill version a node may load: what `list_skills` shows, and what `use_skill` adds (docs/skills.md). */
export interface PlanSkill {
  skillId: string;
  name: string;
  version: number;
  description: string;
  instructions: string;
  tools: PlanTool[];
}

/** Everything a run needs, read once when it starts (so the history fixes it). */
export interface RunPlan extends RunRef {
  agentId: string;
  input: string;
  /** Nodes in execution order: the first node, then along `edges`. */
  nodes: PlanNode[];
  /** The thread's earlier turns, oldest first. */
  history: ChatMessage[];
  /** The guardrails in force, read once at the start: all enabled ones, or those the graph names. */
  inputGuardrails: Guardrail[];
  outputGuardrails: Guardrail[];
  /** `eval` for an experiment's run, where no one answers `ask_human` (absent from plans recorded before evals). */
  source?: string;
  /** How the run makes its model turns and tool calls (activities/runs/run-calls.ts); absent from plans recorded before the choice: `activities`. */
  calls?: RunCalls;
}

/**
 * A run that had begun and ended before this `beginRun`: with local calls a worker killed after
 * `finishRun`'s commit leaves none of the run in Temporal's history, so the next worker begins it again.
 * Nothing runs; the workflow ends as recorded.
 */
export interface EndedRun extends RunRef {
  ended: RunEnd;
  calls?: RunCalls;
}

/** What `beginRun` answers: the run's plan, or its recorded end. */
export type BegunRun = RunPlan | EndedRun;

/** How a run ended, as its record says. */
export type RunEnd = Pick<FinishInput, 'status' | 'output' | 'error'>;

/** Model turns and tool calls as activities, or as local activities in the workflow task (RUN_CALLS). */
export type RunCalls = 'activities' | 'local';

export interface ModelTurnInput extends RunRef {
  nodeId: string;
  /** Counts every model turn of the run, so each has a stable key across retries. */
  turn: number;
  model: string;
  messages: ChatMessage[];
  tools: PlanTool[];
  script: ScriptTurn[] | null;
  scriptPosition: number;
  temperature: number | null;
  /** Checked against the turn's text before any of it reaches a client (see activities/models/call-model.ts). */
  outputGuardrails: Guardrail[];
}

export interface StepInput extends RunRef {
  nodeId: string;
  index: number;
  call: ToolCall;
  tool: PlanTool | null;
}

/** How a tool call ended, as its step records it. */
export type StepOutcome = StepEnd;

/** One model call's usage, priced by its model: model turns, and guardrails' decision calls. */
export interface ModelTurnUsage {
  model: string;
  usage: TurnUsage;
}

export interface FinishInput extends RunRef {
  status: TerminalStatus;
  output: string | null;
  error: { code: string; message: string } | null;
  turns: ModelTurnUsage[];
}

/** A model turn, with the usage of the output guardrails' decision calls that checked its text. */
export type GuardedTurnResult = ModelTurnResult & { guardrailTurns?: ModelTurnUsage[] };

export type { ChatMessage, ModelTurnResult, ToolCall, TurnUsage };
