import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** The agent workflow's outside interface, shared by the workflow and the API. */

export interface AgentRunInput {
  tenantId: string;
  runId: string;
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

/** The question the run waits on, if any. */
export const pendingQuestionQuery = defineQuery<{ id: string; question: string } | null>('pendingQuestion');

export const AGENT_RUN_WORKFLOW = 'agentRun';
export const RUNS_TASK_QUEUE = 'runs';
