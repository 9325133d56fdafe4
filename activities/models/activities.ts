import type { ActivityDeps } from '../deps.js';
import type { ModelTurnInput } from '../runs/types.js';
import { callModel } from './call-model.js';

/** The `agentRun` workflow's model turns. */
export function modelActivities({ db }: ActivityDeps) {
  return {
    /** One model turn, streamed as run events, its text held back until the output guardrails pass it. */
    callModel: (input: ModelTurnInput) => callModel(db, input),
  };
}
