import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Run } from '../db/schema.js';
import { answerUpdate } from '../workflows/agent-run-api.js';
import { ApiError } from './errors.js';

/**
 * Answers a paused run's `ask_human` question with the workflow's answer update, and answers the id of
 * the question it answered. What `POST /v1/runs/{runId}/answer` and the console's answer form share: a
 * run that is not paused, a wrong question id and a second answer are all a conflict (409).
 */
export async function answerPausedRun(temporal: Client, run: Pick<Run, 'id' | 'status'>, answer: { answer: string; questionId?: string }): Promise<string> {
  if (run.status !== 'paused') throw new ApiError('conflict', `run ${run.id} is ${run.status}, not waiting for an answer`);
  try {
    const { questionId } = await temporal.workflow.getHandle(run.id).executeUpdate(answerUpdate, { args: [{ answer: answer.answer, questionId: answer.questionId }] });
    return questionId;
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new ApiError('conflict', (err.cause as Error | undefined)?.message ?? err.message);
    throw err;
  }
}
