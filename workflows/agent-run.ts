import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
  type ActivityOptions,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Guardrail } from '../activities/guardrails/types.js';
import type { BegunRun, ChatMessage, FinishInput, ModelTurnUsage, PlanNode, RunEnd, RunPlan, RunRef, StepInput, StepOutcome } from '../activities/runs/types.js';
import type { WorkflowToolContext } from '../activities/tools/builtins/definition.js';
import type { PlanStep } from '../activities/tools/builtins/plan.js';
import { builtinTool } from '../activities/tools/builtins/registry.js';
import { SkillSession } from '../activities/tools/builtins/skill-session.js';
import {
  AGENT_RUN_VERSION,
  agentRunFailure,
  agentRunInput,
  answerUpdate,
  pendingQuestionQuery,
  relayedQuestionId,
  runErrorCode,
  subagentAnswerSignal,
  subagentQuestionSettledSignal,
  subagentQuestionSignal,
  type AgentRunFailureType,
  type AgentRunInput,
  type AgentRunResult,
  type AnswerArgs,
  type SubagentQuestion,
  type SubagentQuestionSettled,
} from './agent-run-api.js';
import { archiveRunHistory } from './archive-run-history.js';
import { archiveRunHistoryWorkflowId } from './archive-run-history-api.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { ConversationBudget } from './conversation-budget.js';
import { failureMessageOf, failureMessageWithRetries, failureTypeOf, innermostCause } from './failures.js';
import { runSearchAttributes } from './search-attributes.js';

/** A stored guardrail the engine refuses (activities/guardrails/errors.ts): no retry can make it usable. */
const UNUSABLE_GUARDRAIL = 'GuardrailConfigError';

/** Short bookkeeping activities: database writes that should never take long. */
const BOOKKEEPING_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    ...BOOKKEEPING_RETRY,
    nonRetryableErrorTypes: [...(['InvalidGraph', 'RunMissing', 'RunEnded', 'GuardrailBlocked'] satisfies AgentRunFailureType[]), UNUSABLE_GUARDRAIL],
  },
};
const bookkeeping = proxyActivities<Activities>(BOOKKEEPING_OPTIONS);

/**
 * The run record's transitions and steps as local activities: the worker that runs the workflow task runs
 * them in it, without two trips through the server each (scheduled, then dispatched to a poller;
 * docs/performance.md). They are idempotent (each event has a dedupe key), as a local activity runs again
 * when its workflow task is retried after a crash. Runs started before this ran them as activities, and
 * replay so (`patched('local-bookkeeping')`). Two stay activities: the input guardrails' check (an LLM
 * judge may take long) and `pauseRun` (see pauseFor).
 */
const localBookkeeping = proxyLocalActivities<Activities>(BOOKKEEPING_OPTIONS);

const CALL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...(['ModelConfiguration', 'GuardrailBlocked'] satisfies AgentRunFailureType[]), UNUSABLE_GUARDRAIL],
  },
};
/** Model turns and tool calls heartbeat, so a dead worker is noticed in seconds and the call retried. */
const calls = proxyActivities<Activities>({ ...CALL_OPTIONS, heartbeatTimeout: '5 seconds' });
/**
 * The same calls as local activities, for runs that began on a worker with RUN_CALLS=local
 * (activities/runs/run-calls.ts): no trip through the server each; each answers what Postgres
 * recorded when it runs again after a crash.
 */
const localCalls = proxyLocalActivities<Activities>(CALL_OPTIONS);

interface PendingQuestion {
  id: string;
  question: string;
}

/**
 * One agent run. For each node of the graph, in order: a model turn, then each tool it asked for, then
 * the next model turn with the results, until the model answers with text; that text is the next node's
 * input, and the last node's the run's output. `ask_human` pauses the run until the `answer` update.
 * However the run ends, it records the end, which queues its history for the `runHistoryArchiver`.
 *
 * The run's state lives in `AgentRun`; this function only wires the messages to it.
 */
export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  // Started by newer code than this worker's (a rolling upgrade, a rollback): an error that is no Temporal
  // failure fails the workflow task, which is retried until a worker that knows the version takes it.
  if ((input.version ?? 0) > AGENT_RUN_VERSION) {
    throw new Error(`the run is of workflow version ${input.version}; this worker knows versions up to ${AGENT_RUN_VERSION}`);
  }
  const run = new AgentRun({ tenantId: input.tenantId, runId: input.runId }, input.parentRunId, input.version ?? 0);
  setHandler(pendingQuestionQuery, () => run.pendingQuestion);
  setHandler(answerUpdate, (args) => run.answer(args), { validator: (args) => run.validateAnswer(args) });
  setHandler(subagentQuestionSignal, (asked) => run.subagentAsked(asked));
  setHandler(subagentQuestionSettledSignal, (settled) => run.subagentSettled(settled));
  setHandler(subagentAnswerSignal, (answered) => run.answeredByParent(answered));
  return run.execute();
}

/** The state of one run's workflow, and the steps that change it. */
class AgentRun {
  /** Every priced model call so far (turns and guardrail decisions), for the run's usage and cost. */
  private readonly turns: ModelTurnUsage[] = [];
  /** Answers delivered by the `answer` update, by question id, until `ask_human` takes them. */
  private readonly answers = new Map<string, string>();
  /** Questions whose answer the run record shows as taken (the update returns only then). */
  private readonly resumed = new Set<string>();
  /** Questions the running subagent asked, waiting to become this run's (docs/subagents.md). */
  private readonly subagentQuestions: SubagentQuestion[] = [];
  /** Answers to this run's pending question given to the parent run, by question id. */
  private readonly answersFromParent = new Map<string, string>();
  /** Answers given to a subagent directly, settling the question this run relayed, by this run's question id. */
  private readonly settledBySubagent = new Map<string, string | null>();
  pendingQuestion: PendingQuestion | null = null;
  private plan: PlanStep[] = [];
  /** The running node's skills and the tools it offers (docs/skills.md). */
  private skills: SkillSession | undefined;
  private outputGuardrails: Guardrail[] = [];
  private source: string | undefined;
  /** Count every model turn and tool call of the run, so each has a stable key across retries. */
  private turnCount = 0;
  private stepCount = 0;

  /** Where the bookkeeping steps run: local activities, or activities in runs recorded before them. */
  private readonly books: typeof bookkeeping;
  /** Where model turns and tool calls run, as the run's plan says (RUN_CALLS when it began). */
  private calls: typeof calls = calls;

  constructor(
    private readonly ref: RunRef,
    /** A subagent's run: the run that started it, which shows this run's questions as its own. */
    private readonly parentRunId: string | undefined,
    /** The workflow code's version the run started at (AgentRunInput.version; 0 before versions). */
    private readonly version: number,
  ) {
    this.books = this.has('local-bookkeeping', 1) ? localBookkeeping : bookkeeping;
  }

  /** Whether the change `patchId`, made at workflow version `since`, applies to this run (AgentRunInput.version). */
  private has(patchId: string, since: number): boolean {
    return this.version >= since || patched(patchId);
  }

  async execute(): Promise<AgentRunResult> {
    const begun = await this.begin().catch((err) => this.endOnError(err));
    // Begun and ended before this execution (BegunRun): the workflow ends as the run did, recording nothing.
    if ('ended' in begun) return endAsRecorded(begun.ended);
    try {
      const output = await this.runGraph(begun);
      await this.finish({ status: 'completed', output, error: null });
      return { status: 'completed', output };
    } catch (err) {
      return this.endOnError(err);
    }
  }

  /** Records the run's end that `err` means (cancelled or failed) and ends the workflow the same way. */
  private async endOnError(err: unknown): Promise<never> {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => this.finish({ status: 'cancelled', output: null, error: null }));
      throw err;
    }
    const error = { code: runErrorCode(failureTypeOf(err)), message: failureMessageWithRetries(err) };
    this.turns.push(...guardrailTurnsOf(err));
    await this.finish({ status: 'failed', output: null, error });
    // The workflow's own failure is typed by the run's error code, as the run record shows it.
    throw ApplicationFailure.nonRetryable(error.message, error.code);
  }

  /** Rejects an answer unless a question is pending and, when the answer names one, it is that one. */
  validateAnswer({ questionId, answer }: AnswerArgs): void {
    if (!this.pendingQuestion) throw new Error('the run is not waiting for an answer');
    if (questionId !== undefined && questionId !== this.pendingQuestion.id) {
      throw new Error(`question '${questionId}' is not the pending one ('${this.pendingQuestion.id}')`);
    }
    if (typeof answer !== 'string') throw new Error('the answer must be a string');
  }

  async answer({ answer }: AnswerArgs): Promise<{ questionId: string }> {
    const questionId = this.pendingQuestion!.id;
    this.answers.set(questionId, answer);
    this.pendingQuestion = null;
    // Answer only once the run shows as running again, so a client that reads the run next sees it so.
    await condition(() => this.resumed.has(questionId));
    return { questionId };
  }

  private begin(): Promise<BegunRun> {
    // Runs recorded before the activity's rename asked for `startRun`; their histories must replay.
    return this.has('begin-run', 1) ? this.books.beginRun(this.ref) : this.books.startRun(this.ref);
  }

  private async runGraph(runPlan: RunPlan): Promise<string> {
    // Plans recorded before guardrails existed have neither list (the history fixture holds one).
    this.outputGuardrails = runPlan.outputGuardrails ?? [];
    this.source = runPlan.source;
    if (runPlan.calls === 'local') this.calls = localCalls;
    // Input guardrails see the run's input before any model does; a redaction is what the model gets.
    let text = runPlan.input;
    if (runPlan.inputGuardrails?.length) {
      const checked = await bookkeeping.checkInput({ ...this.ref, text, guardrails: runPlan.inputGuardrails });
      this.turns.push(...checked.turns);
      text = checked.text;
    }
    for (const [i, node] of runPlan.nodes.entries()) {
      // The thread's earlier turns are the first node's context; later nodes see their input only.
      text = await this.runNode(node, text, i === 0 ? runPlan.history : []);
    }
    return text;
  }

  private async runNode(node: PlanNode, nodeInput: string, history: ChatMessage[]): Promise<string> {
    const conversation = new ConversationBudget(
      node.id,
      [...(node.system ? [{ role: 'system' as const, content: node.system }] : []), ...history, { role: 'user', content: nodeInput }],
      this.has('conversation-limit', 2),
    );
    const { messages } = conversation;
    const skills = (this.skills = new SkillSession(node, (use) => this.books.recordSkillUse({ ...this.ref, use })));
    for (let position = 0; position < node.maxTurns; position++) {
      const result = await this.calls.callModel({
        ...this.ref,
        nodeId: node.id,
        turn: this.turnCount++,
        model: node.model,
        messages,
        tools: skills.tools,
        script: node.script,
        scriptPosition: position,
        temperature: node.temperature,
        outputGuardrails: this.outputGuardrails,
      });
      this.turns.push({ model: node.model, usage: result.usage }, ...(result.guardrailTurns ?? []));
      if (result.toolCalls.length === 0) return result.text;

      conversation.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      for (const call of result.toolCalls) {
        const tool = skills.tools.find((t) => t.name === call.tool) ?? null;
        const outcome = await this.runTool({ ...this.ref, nodeId: node.id, index: this.stepCount++, call, tool });
        conversation.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.tool,
          content: JSON.stringify(outcome.ok ? outcome.result : { error: outcome.error }),
          isError: !outcome.ok,
        });
      }
      // A skill loaded this turn: its instructions follow the turn's tool results.
      conversation.push(...skills.takeMessages());
    }
    throw agentRunFailure('MaxTurns', `node '${node.id}' used all ${node.maxTurns} turns without a final answer`);
  }

  /** A built-in that changes the run, or a subagent, runs here as a step of its own; every other tool is an activity. */
  private async runTool(step: StepInput): Promise<StepOutcome> {
    if (step.tool?.kind === 'agent') return this.runSubagentStep(step);
    const builtin = step.tool?.kind === 'builtin' ? builtinTool(step.tool.builtin) : undefined;
    // Before skills, list_skills and use_skill failed in executeTool; runs recorded then replay that way.
    const skillTool = step.tool?.builtin === 'list_skills' || step.tool?.builtin === 'use_skill';
    if (builtin?.runsIn !== 'workflow' || (skillTool && !this.has('workflow-skills', 1))) return this.calls.executeTool(step);

    await this.books.beginStep(step);
    let outcome: StepOutcome;
    try {
      outcome = { ok: true, result: await builtin.run(step.call.arguments, this.toolContext(step)) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    await this.books.completeStep(step, outcome);
    return outcome;
  }

  private toolContext(step: StepInput): WorkflowToolContext {
    return {
      stepIndex: step.index,
      askHuman: (questionId, question) => this.askHuman(questionId, question),
      plan: () => this.plan,
      replacePlan: (plan) => {
        this.plan = plan;
      },
      skills: this.skills!,
    };
  }

  private async askHuman(questionId: string, question: string): Promise<string> {
    // An experiment's run has no one to answer: the tool call fails and the model goes on without it.
    if (this.source === 'eval') throw new Error('no one answers questions in an eval run: ask_human is unavailable here');
    return (await this.pauseFor(questionId, question))!;
  }

  /**
   * Pauses the run on a question — its own, or one a subagent asked (`relayed`) — until it is answered
   * here, by the parent run, or (a relayed one) to the subagent directly; answers the answer, or null when
   * the subagent ended before anyone answered.
   */
  private async pauseFor(questionId: string, question: string, relayed?: { childRunId: string; questionId: string; ended: () => boolean }): Promise<string | null> {
    const answer = await this.pauseUntilSettled(questionId, question, relayed);
    // The `answer` update replies when its workflow task completes. With local calls the task would go
    // on through the run's next calls first (RUN_CALLS=local), so the answer would return only after
    // them: a timer ends the task here.
    if (this.calls === localCalls) await sleep(1);
    return answer;
  }

  private async pauseUntilSettled(questionId: string, question: string, relayed?: { childRunId: string; questionId: string; ended: () => boolean }): Promise<string | null> {
    try {
      // Pending before the run shows as paused, so an answer that follows the paused status is accepted.
      this.pendingQuestion = { id: questionId, question };
      // An activity, not local: the question must be in a completed workflow task before the run shows as
      // paused, or an answer sent after a worker crash in between would be refused until the task is retried.
      await bookkeeping.pauseRun({ ...this.ref, questionId, question });
      if (this.parentRunId) await this.signal(this.parentRunId, subagentQuestionSignal, { childRunId: this.ref.runId, questionId, question });
      await condition(
        () => this.answers.has(questionId) || this.answersFromParent.has(questionId) || this.settledBySubagent.has(questionId) || relayed?.ended() === true,
      );
      this.pendingQuestion = null;
      const given = this.answers.get(questionId) ?? this.answersFromParent.get(questionId);
      const answer = given ?? this.settledBySubagent.get(questionId) ?? null;
      // A subagent that has ended meanwhile no longer takes it; its end reaches this run all the same.
      if (relayed && given !== undefined && !relayed.ended()) {
        await this.signal(relayed.childRunId, subagentAnswerSignal, { questionId: relayed.questionId, answer: given });
      }
      await this.books.resumeRun({ ...this.ref, questionId, answer });
      // The parent shows this question as its own until told it is settled, unless the answer came from it.
      if (this.parentRunId && !this.answersFromParent.has(questionId)) {
        await this.signal(this.parentRunId, subagentQuestionSettledSignal, { childRunId: this.ref.runId, questionId, answer });
      }
      return answer;
    } finally {
      // However the pause ends (a cancel included), an answer the update took gets its reply.
      this.pendingQuestion = null;
      this.resumed.add(questionId);
    }
  }

  /** Signals another run's workflow; one that has closed (a relay racing its end) is no longer listening, which is no error here. */
  private async signal<Args extends unknown[]>(workflowId: string, signal: SignalDefinition<Args>, ...args: Args): Promise<void> {
    try {
      await getExternalWorkflowHandle(workflowId).signal(signal, ...args);
    } catch (err) {
      if (isCancellation(err)) throw err;
    }
  }

  subagentAsked(asked: SubagentQuestion): void {
    this.subagentQuestions.push(asked);
  }

  subagentSettled({ childRunId, questionId, answer }: SubagentQuestionSettled): void {
    const id = relayedQuestionId(childRunId, questionId);
    this.settledBySubagent.set(id, answer);
    // Settled below: an answer given here from now on would reach no one.
    if (this.pendingQuestion?.id === id) this.pendingQuestion = null;
  }

  answeredByParent({ questionId, answer }: { questionId: string; answer: string }): void {
    // Answered here first (the update took it), or not this run's question: the parent's answer is moot.
    if (this.pendingQuestion?.id !== questionId) return;
    this.answersFromParent.set(questionId, answer);
    this.pendingQuestion = null;
  }

  /** A subagent tool's call: the child run, as a step of this run; its output is the tool's result. */
  private async runSubagentStep(step: StepInput): Promise<StepOutcome> {
    const outcome = await this.runSubagent(step);
    await this.books.completeStep(step, outcome);
    return outcome;
  }

  /** Begins the step and runs the child (a child workflow whose id is its run id); answers how the call ended. */
  private async runSubagent(step: StepInput): Promise<StepOutcome> {
    // A child row the parent is cancelled before starting stays queued; finishRun ends it (db/runs.ts).
    const start = await this.books.startSubagentRun(step);
    if (!start.ok) return { ok: false, error: start.error };
    let result: Promise<AgentRunResult> | undefined;
    let ended = false;
    try {
      const child = await startChild(agentRun, {
        workflowId: start.runId,
        taskQueue: workflowInfo().taskQueue,
        args: [agentRunInput({ tenantId: this.ref.tenantId, runId: start.runId }, this.ref.runId)],
        typedSearchAttributes: runSearchAttributes({ tenantId: this.ref.tenantId, agentId: start.agentId, source: start.source }),
        // A cancelled parent waits for its child to record its end, so the child's cost is in the parent's.
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
      result = child.result();
      // Handled at once: the child may end while this run is paused on its question, long before `await result`.
      result.then(
        () => (ended = true),
        () => (ended = true),
      );
      while (!ended) {
        await condition(() => ended || this.subagentQuestions.length > 0);
        const asked = this.subagentQuestions.shift();
        if (asked && !ended && asked.childRunId === start.runId) {
          await this.pauseFor(relayedQuestionId(asked.childRunId, asked.questionId), asked.question, { ...asked, ended: () => ended });
        }
      }
      return { ok: true, result: (await result).output };
    } catch (err) {
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
        if (result) await CancellationScope.nonCancellable(() => result!.catch(() => undefined));
        throw err;
      }
      const what = isCancellation(err) ? 'was cancelled' : `failed: ${failureMessageOf(err)}`;
      return { ok: false, error: `the subagent's run ${start.runId} ${what}` };
    } finally {
      this.subagentQuestions.length = 0;
    }
  }

  private async finish(end: Omit<FinishInput, keyof RunRef | 'turns'>): Promise<void> {
    await this.books.finishRun({ ...this.ref, ...end, turns: this.turns });
    // finishRun queued the history for the archiver (activities/runs/history.ts); runs started before
    // the queue archive it with a child of their own, as their histories say.
    if (this.has('history-queue', 1)) return;
    await startChild(archiveRunHistory, {
      workflowId: archiveRunHistoryWorkflowId(this.ref.runId),
      taskQueue: workflowInfo().taskQueue,
      args: [this.ref],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  }
}

/** How a workflow whose run's end was already recorded ends: as the run did. */
function endAsRecorded(end: RunEnd): AgentRunResult {
  if (end.status === 'completed') return { status: 'completed', output: end.output ?? '' };
  if (end.status === 'cancelled') throw new CancelledFailure('the run was cancelled');
  throw ApplicationFailure.nonRetryable(end.error?.message ?? 'the run failed', end.error?.code);
}

/** A guardrail's block carries the usage of the decision calls that made it (activities/guardrails/enforce.ts). */
function guardrailTurnsOf(err: unknown): ModelTurnUsage[] {
  if (failureTypeOf(err) !== ('GuardrailBlocked' satisfies AgentRunFailureType)) return [];
  const [turns] = (innermostCause(err) as { details?: unknown[] }).details ?? [];
  return Array.isArray(turns) ? (turns as ModelTurnUsage[]) : [];
}
