import type { ActivityDeps } from '../deps.js';
import { archiveQueuedHistories, storeRunHistory } from './history.js';
import { replayRunHistory } from './replay.js';
import { beginRun, finishRun, pauseRun, resumeRun } from './lifecycle.js';
import { recordSkillUse } from './skill-uses.js';
import { beginStep, completeStep } from './steps.js';
import { startSubagentRun } from './subagents.js';
import type { BegunRun, FinishInput, RunRef, StepInput, StepOutcome } from './types.js';
import type { RunSkillUse } from '../../db/schema.js';
import type { ReplayRunInput } from '../../workflows/replay-run-api.js';
import { emitAfterBookkeeping } from '../webhooks/bookkeeping-emission.js';
import { emitRunEnded, emitRunPaused } from '../webhooks/platform-events.js';

/** The `agentRun` workflow's bookkeeping: the run record's transitions, its steps, its archived history and replays of it. */
export function runActivities({ db, temporal, workflowBundle, runCalls }: ActivityDeps) {
  return {
    /** queued → running; answers the run's plan, with how this worker has runs make their calls. */
    beginRun: async (ref: RunRef): Promise<BegunRun> => ({ ...(await beginRun(db, ref)), calls: runCalls }),
    /**
     * The name `beginRun` had until histories recorded the rename: runs started before it replay and
     * resume with this one (agentRun asks for it when `patched('begin-run')` is false).
     */
    startRun: (ref: RunRef) => beginRun(db, ref),
    // Webhooks hear of a pause or an end once it is committed; a retry emits again, which sends nothing twice,
    // and an emission that keeps failing is let go rather than failing the run (activities/webhooks/bookkeeping-emission.ts).
    pauseRun: async (ref: RunRef & { questionId: string; question: string }) => {
      await pauseRun(db, ref);
      await emitAfterBookkeeping('run.paused', () => emitRunPaused({ db, temporal }, ref));
    },
    resumeRun: (ref: RunRef & { questionId: string; answer: string | null }) => resumeRun(db, ref),
    finishRun: async (finish: FinishInput) => {
      await finishRun(db, finish);
      await emitAfterBookkeeping(`run.${finish.status}`, () => emitRunEnded({ db, temporal }, finish));
    },
    beginStep: async (step: StepInput): Promise<void> => {
      await beginStep(db, step);
    },
    completeStep: (step: StepInput, outcome: StepOutcome) => completeStep(db, step, outcome),
    /** `use_skill` loaded a skill: the version joins the run's `skills`. */
    recordSkillUse: (input: RunRef & { use: RunSkillUse }) => recordSkillUse(db, input),
    /** A subagent tool's call: begins its step and records the child run the workflow then starts. */
    startSubagentRun: (step: StepInput) => startSubagentRun(db, step),
    storeRunHistory: (ref: RunRef) => storeRunHistory(db, temporal, ref),
    archiveQueuedHistories: () => archiveQueuedHistories(db, temporal),
    /** The `replayRun` workflow's one step, on the `replays` queue. */
    replayRunHistory: (ref: ReplayRunInput) => replayRunHistory(db, workflowBundle, ref),
  };
}
