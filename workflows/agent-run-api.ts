import { ApplicationFailure } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { TASK_QUEUES } from './task-queues.js';

/**
 * The agent workflow's contract, shared by the workflow, its activities and whoever starts it: where it
 * runs, its input and result, its messages, and the failure types it ends with. Start it with
 * `client.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, …)` through a type-only import of
 * `agentRun`, so its arguments stay typed without bundling workflow code into the caller.
 */

export const AGENT_RUN_WORKFLOW_TYPE = 'agentRun';
export const AGENT_RUN_TASK_QUEUE = TASK_QUEUES.runs;

export interface AgentRunInput {
  tenantId: string;
  runId: string;
  /** A subagent's run: the run (and workflow id) whose tool call started it, which its questions go to. */
  parentRunId?: string;
  /**
   * The workflow code's version when the run started (`AGENT_RUN_VERSION`); absent on runs started before
   * versions. A change to the workflow applies without asking to runs of the version that introduced it
   * and later, and through `patched()` to older ones, which replay the way their histories went. Why not
   * `patched()` alone: on a new run each one records a marker and upserts the `TemporalChangeVersion`
   * search attribute, a visibility write per patch on every run (docs/performance.md).
   */
  version?: number;
}

/**
 * Version 1 has every change made under `patched()` before versions: `local-bookkeeping`, `begin-run`,
 * `workflow-skills` and `history-queue` (workflows/agent-run.ts). Version 2: `conversation-limit`
 * (workflows/conversation-budget.ts). The next change to the workflow raises it.
 */
export const AGENT_RUN_VERSION = 2;

/** The input a run's workflow starts with, at the current version: what every starter of a run passes. */
export function agentRunInput(ref: { tenantId: string; runId: string }, parentRunId?: string): AgentRunInput {
  return { tenantId: ref.tenantId, runId: ref.runId, ...(parentRunId ? { parentRunId } : {}), version: AGENT_RUN_VERSION };
}

export interface AgentRunResult {
  status: 'completed';
  output: string;
}

export interface AnswerArgs {
  /** The pending question's id; omitted means "the question pending now". */
  questionId?: string;
  answer: string;
}

/** Delivers the answer to `ask_human`. Rejected unless that question is pending (so each is answered once). */
export const answerUpdate = defineUpdate<{ questionId: string }, [AnswerArgs]>('answer');

/**
 * A subagent's `ask_human` pauses every run above it (docs/subagents.md). The child tells its parent it
 * asks (the parent then pauses with the question under the id `<child run id>/<question id>`, and tells
 * its own parent in turn); an answer given to the parent reaches the child as `subagentAnswer`; an answer
 * given to the child directly is told to the parent as `subagentQuestionSettled`, so it resumes too.
 */
export interface SubagentQuestion {
  childRunId: string;
  questionId: string;
  question: string;
}
export const subagentQuestionSignal = defineSignal<[SubagentQuestion]>('subagentQuestion');
/** `answer` null: the question was withdrawn (a subagent below ended before anyone answered). */
export interface SubagentQuestionSettled {
  childRunId: string;
  questionId: string;
  answer: string | null;
}
export const subagentQuestionSettledSignal = defineSignal<[SubagentQuestionSettled]>('subagentQuestionSettled');
export const subagentAnswerSignal = defineSignal<[{ questionId: string; answer: string }]>('subagentAnswer');

/** The id under which a run shows the question one of its subagents asks. */
export function relayedQuestionId(childRunId: string, questionId: string): string {
  return `${childRunId}/${questionId}`;
}

/** The question the run waits on, if any. */
export const pendingQuestionQuery = defineQuery<{ id: string; question: string } | null>('pendingQuestion');

/**
 * The ApplicationFailure types a run fails with (thrown by its activities or by the workflow), each with
 * the stable `error.code` the run record shows. Any other failure is `run_error`. None is retryable.
 */
export const AGENT_RUN_FAILURES = {
  /** The graph cannot run: a missing node, tool, prompt or model (activities/runs/plan.ts). */
  InvalidGraph: 'invalid_graph',
  /** The run's row is gone. */
  RunMissing: 'run_error',
  /** The run had ended before its workflow began it (its start was reported failed). */
  RunEnded: 'run_error',
  /** The model provider is misconfigured or refused the request for good (activities/models/errors.ts). */
  ModelConfiguration: 'model_error',
  /** A node used all its turns without a final answer. */
  MaxTurns: 'max_turns_exceeded',
  /** A guardrail with `action: block` tripped; the failure's details carry the decision calls' usage. */
  GuardrailBlocked: 'guardrail_blocked',
  /** A node's conversation outgrew MAX_CONVERSATION_CHARS (workflows/conversation-budget.ts). */
  ConversationTooLong: 'context_length_exceeded',
} as const;

export type AgentRunFailureType = keyof typeof AGENT_RUN_FAILURES;

/** A non-retryable failure of one of the run's types. */
export function agentRunFailure(type: AgentRunFailureType, message: string, details: unknown[] = []): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details });
}

/** The run's `error.code` for a failure type. */
export function runErrorCode(type: string | undefined): string {
  return type !== undefined && Object.hasOwn(AGENT_RUN_FAILURES, type) ? AGENT_RUN_FAILURES[type as AgentRunFailureType] : 'run_error';
}
