import {
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { Guardrail } from '../activities/guardrails/types.js';
import type { ChatMessage, FinishInput, ModelTurnUsage, PlanNode, RunRef, StepInput, StepOutcome } from '../activities/runs/types.js';
import type { WorkflowToolContext } from '../activities/tools/builtins/definition.js';
import type { PlanStep } from '../activities/tools/builtins/plan.js';
import { builtinTool } from '../activities/tools/builtins/registry.js';
import {
  agentRunFailure,
  answerUpdate,
  pendingQuestionQuery,
  runErrorCode,
  type AgentRunFailureType,
  type AgentRunInput,
  type AgentRunResult,
  type AnswerArgs,
} from './agent-run-api.js';
import { archiveRunHistory } from './archive-run-history.js';
import { archiveRunHistoryWorkflowId } from './archive-run-history-api.js';
import { BOOKKEEPING_RETRY } from './bookkeeping-retry.js';
import { failureMessageWithRetries, failureTypeOf, innermostCause } from './failures.js';

/** A stored guardrail the engine refuses (activities/guardrails/errors.ts): no retry can make it usable. */
const UNUSABLE_GUARDRAIL = 'GuardrailConfigError';

/** Short bookkeeping activities: database writes that should never take long. */
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    ...BOOKKEEPING_RETRY,
    nonRetryableErrorTypes: [...(['InvalidGraph', 'RunMissing', 'GuardrailBlocked'] satisfies AgentRunFailureType[]), UNUSABLE_GUARDRAIL],
  },
});

/** Model turns and tool calls heartbeat, so a dead worker is noticed in seconds and the call retried. */
const calls = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...(['ModelConfiguration', 'GuardrailBlocked'] satisfies AgentRunFailureType[]), UNUSABLE_GUARDRAIL],
  },
});

interface PendingQuestion {
  id: string;
  question: string;
}

/**
 * One agent run. For each node of the graph, in order: a model turn, then each tool it asked for, then
 * the next model turn with the results, until the model answers with text; that text is the next node's
 * input, and the last node's the run's output. `ask_human` pauses the run until the `answer` update.
 * However the run ends, it records the end and hands its history to `archiveRunHistory`.
 *
 * The run's state lives in `AgentRun`; this function only wires the messages to it.
 */
export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const run = new AgentRun({ tenantId: input.tenantId, runId: input.runId });
  setHandler(pendingQuestionQuery, () => run.pendingQuestion);
  setHandler(answerUpdate, (args) => run.answer(args), { validator: (args) => run.validateAnswer(args) });
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
  pendingQuestion: PendingQuestion | null = null;
  private plan: PlanStep[] = [];
  private outputGuardrails: Guardrail[] = [];
  private source: string | undefined;
  /** Count every model turn and tool call of the run, so each has a stable key across retries. */
  private turnCount = 0;
  private stepCount = 0;

  constructor(private readonly ref: RunRef) {}

  async execute(): Promise<AgentRunResult> {
    try {
      const output = await this.runGraph();
      await this.finish({ status: 'completed', output, error: null });
      return { status: 'completed', output };
    } catch (err) {
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

  private async runGraph(): Promise<string> {
    // Runs recorded before the activity's rename asked for `startRun`; their histories must replay.
    const runPlan = patched('begin-run') ? await bookkeeping.beginRun(this.ref) : await bookkeeping.startRun(this.ref);
    // Plans recorded before guardrails existed have neither list (the history fixture holds one).
    this.outputGuardrails = runPlan.outputGuardrails ?? [];
    this.source = runPlan.source;
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
    const messages: ChatMessage[] = [...(node.system ? [{ role: 'system' as const, content: node.system }] : []), ...history];
    messages.push({ role: 'user', content: nodeInput });
    for (let position = 0; position < node.maxTurns; position++) {
      const result = await calls.callModel({
        ...this.ref,
        nodeId: node.id,
        turn: this.turnCount++,
        model: node.model,
        messages,
        tools: node.tools,
        script: node.script,
        scriptPosition: position,
        temperature: node.temperature,
        outputGuardrails: this.outputGuardrails,
      });
      this.turns.push({ model: node.model, usage: result.usage }, ...(result.guardrailTurns ?? []));
      if (result.toolCalls.length === 0) return result.text;

      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      for (const call of result.toolCalls) {
        const tool = node.tools.find((t) => t.name === call.tool) ?? null;
        const outcome = await this.runTool({ ...this.ref, nodeId: node.id, index: this.stepCount++, call, tool });
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.tool,
          content: JSON.stringify(outcome.ok ? outcome.result : { error: outcome.error }),
          isError: !outcome.ok,
        });
      }
    }
    throw agentRunFailure('MaxTurns', `node '${node.id}' used all ${node.maxTurns} turns without a final answer`);
  }

  /** A built-in that changes the run runs here, as a step of its own; every other tool is an activity. */
  private async runTool(step: StepInput): Promise<StepOutcome> {
    const builtin = step.tool?.kind === 'builtin' ? builtinTool(step.tool.builtin) : undefined;
    if (builtin?.runsIn !== 'workflow') return calls.executeTool(step);

    await bookkeeping.beginStep(step);
    let outcome: StepOutcome;
    try {
      outcome = { ok: true, result: await builtin.run(step.call.arguments, this.toolContext(step)) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    await bookkeeping.completeStep(step, outcome);
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
    };
  }

  private async askHuman(questionId: string, question: string): Promise<string> {
    // An experiment's run has no one to answer: the tool call fails and the model goes on without it.
    if (this.source === 'eval') throw new Error('no one answers questions in an eval run: ask_human is unavailable here');
    // Pending before the run shows as paused, so an answer that follows the paused status is accepted.
    this.pendingQuestion = { id: questionId, question };
    await bookkeeping.pauseRun({ ...this.ref, questionId, question });
    await condition(() => this.answers.has(questionId));
    const answer = this.answers.get(questionId)!;
    await bookkeeping.resumeRun({ ...this.ref, questionId, answer });
    this.resumed.add(questionId);
    return answer;
  }

  private async finish(end: Omit<FinishInput, keyof RunRef | 'turns'>): Promise<void> {
    await bookkeeping.finishRun({ ...this.ref, ...end, turns: this.turns });
    await startChild(archiveRunHistory, {
      workflowId: archiveRunHistoryWorkflowId(this.ref.runId),
      taskQueue: workflowInfo().taskQueue,
      args: [this.ref],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  }
}

/** A guardrail's block carries the usage of the decision calls that made it (activities/guardrails/enforce.ts). */
function guardrailTurnsOf(err: unknown): ModelTurnUsage[] {
  if (failureTypeOf(err) !== ('GuardrailBlocked' satisfies AgentRunFailureType)) return [];
  const [turns] = (innermostCause(err) as { details?: unknown[] }).details ?? [];
  return Array.isArray(turns) ? (turns as ModelTurnUsage[]) : [];
}
