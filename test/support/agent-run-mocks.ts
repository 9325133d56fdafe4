import { randomUUID } from 'node:crypto';
import type { Activities } from '../../activities/index.js';
import type { BegunRun, GuardedTurnResult, ModelTurnUsage, PlanNode, PlanTool, RunPlan, RunRef } from '../../activities/runs/types.js';

/**
 * Mocked activities for the `agentRun` workflow tests: plain functions under the names and types of
 * `createActivities`, so a renamed or reshaped activity fails the build, plus builders for what they answer.
 */

/** The activities one test mocks. Typed against the real ones: an unknown name or a wrong shape does not compile. */
export type MockActivities = Partial<Activities>;

/** Records every call of the mocks it wraps, in order, so a test can check what the workflow asked for. */
export class ActivityLog {
  private readonly calls: Array<{ name: string; args: unknown[] }> = [];

  record(mocks: MockActivities): MockActivities {
    return Object.fromEntries(
      Object.entries(mocks).map(([name, mock]) => [
        name,
        (...args: unknown[]) => {
          this.calls.push({ name, args });
          return (mock as (...args: unknown[]) => unknown)(...args);
        },
      ]),
    ) as MockActivities;
  }

  /** The names of the activities called, in order. */
  names(): string[] {
    return this.calls.map((call) => call.name);
  }

  /** Each call's arguments. */
  argsOf<K extends keyof Activities>(name: K): Array<Parameters<Activities[K]>> {
    return this.calls.filter((call) => call.name === name).map((call) => call.args as Parameters<Activities[K]>);
  }

  /** Each call's first (for most activities, only) argument. */
  inputsOf<K extends keyof Activities>(name: K): Array<Parameters<Activities[K]>[0]> {
    return this.argsOf(name).map((args) => args[0]);
  }
}

/** A run nobody recorded: the tenant and run exist only in the mocks. */
export function runRef(): RunRef {
  return { tenantId: 'ten_workflow_test', runId: `run_workflow_test_${randomUUID()}` };
}

export function planNode(node: Partial<PlanNode> = {}): PlanNode {
  return { id: 'main', model: 'mock/model', system: null, prompt: null, script: null, temperature: null, maxTurns: 10, tools: [], ...node };
}

export function runPlan(ref: RunRef, plan: Partial<RunPlan> = {}): RunPlan {
  return { ...ref, agentId: 'agt_workflow_test', input: 'the run input', nodes: [planNode()], history: [], inputGuardrails: [], outputGuardrails: [], ...plan };
}

/** A built-in tool (ask_human, wait_until, plan_write and verify_plan run in the workflow itself). */
export function builtinTool(builtin: string): PlanTool {
  return { id: `tool_${builtin}`, name: builtin, kind: 'builtin', builtin, description: builtin, parameters: { type: 'object' } };
}

/** A tool the `executeTool` activity runs. */
export function httpTool(name: string): PlanTool {
  return { id: `tool_${name}`, name, kind: 'http', builtin: null, description: name, parameters: { type: 'object' } };
}

export const TURN_USAGE = { prompt_tokens: 11, completion_tokens: 7 };

export function textTurn(text: string): GuardedTurnResult {
  return { text, toolCalls: [], usage: TURN_USAGE, finishReason: 'stop' };
}

export function toolCallTurn(...calls: Array<{ tool: string; arguments?: Record<string, unknown> }>): GuardedTurnResult {
  return {
    text: '',
    toolCalls: calls.map((call, i) => ({ id: `call_${i}_${randomUUID()}`, tool: call.tool, arguments: call.arguments ?? {} })),
    usage: TURN_USAGE,
    finishReason: 'tool-calls',
  };
}

/** A guardrail decision call's usage, as a `GuardrailBlocked` failure's details carry it. */
export function decisionTurn(model: string): ModelTurnUsage {
  return { model, usage: { prompt_tokens: 3, completion_tokens: 1 } };
}

/**
 * Every bookkeeping activity the workflow calls on its way, answering `plan` and otherwise doing nothing;
 * a test overrides the ones it is about. `startRun` is left out on purpose: only replays of histories
 * older than `beginRun` may ask for it. `storeRunHistory` serves the archiving child that replays of
 * histories older than the archive queue start, on the run's task queue: the test's.
 */
export function bookkeepingMocks(plan: BegunRun): MockActivities {
  return {
    beginRun: async () => plan,
    checkInput: async ({ text }) => ({ text, turns: [] }),
    pauseRun: async () => {},
    resumeRun: async () => {},
    beginStep: async () => {},
    completeStep: async () => {},
    finishRun: async () => {},
    storeRunHistory: async () => 0,
  };
}

/** A promise the test resolves when it chooses: lets a mock signal, or wait for, a moment of the run. */
export class Gate<T = void> {
  readonly promise: Promise<T>;
  open!: (value: T) => void;

  constructor() {
    this.promise = new Promise<T>((resolve) => (this.open = resolve));
  }
}
