import {
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ChatMessage, FinishInput, PlanNode, RunPlan, RunRef, StepInput, StepOutcome } from '../activities/runs/types.js';
import { answerUpdate, pendingQuestionQuery, AGENT_RUN_TASK_QUEUE, type AgentRunInput, type AgentRunResult } from './agent-run-api.js';
import { archiveRunHistory } from './archive-run-history.js';
import { waitMilliseconds } from './durations.js';
import { verifyPlan, writePlan, type PlanStep } from './plan.js';

/** Short bookkeeping activities: database writes that should never take long. */
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', nonRetryableErrorTypes: ['InvalidGraph', 'RunMissing', 'GuardrailBlocked'] },
});

/** Model turns and tool calls heartbeat, so a dead worker is noticed in seconds and the call retried. */
const calls = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['ModelConfiguration', 'GuardrailBlocked'] },
});

/** The built-in tools that change the run itself, so the workflow runs them rather than an activity. */
const WORKFLOW_TOOLS = new Set(['ask_human', 'wait_until', 'plan_write', 'verify_plan']);

/**
 * One agent run. For each node of the graph, in order: a model turn, then each tool it asked for, then
 * the next model turn with the results, until the model answers with text; that text is the next node's
 * input, and the last node's the run's output. `ask_human` pauses the run until the `answer` update.
 * However the run ends, it records the end and hands its history to `archiveRunHistory`.
 */
export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const ref: RunRef = { tenantId: input.tenantId, runId: input.runId };
  const turns: FinishInput['turns'] = [];
  const answers = new Map<string, string>();
  const resumed = new Set<string>();
  let pending: { id: string; question: string } | null = null;
  let plan: PlanStep[] = [];
  let turnCount = 0;
  let stepCount = 0;

  setHandler(pendingQuestionQuery, () => pending);
  setHandler(
    answerUpdate,
    async ({ answer }) => {
      const questionId = pending!.id;
      answers.set(questionId, answer);
      pending = null;
      // Answer only once the run shows as running again, so a client that reads the run next sees it so.
      await condition(() => resumed.has(questionId));
      return { questionId };
    },
    {
      validator: ({ questionId, answer }) => {
        if (!pending) throw new Error('the run is not waiting for an answer');
        if (questionId !== undefined && questionId !== pending.id) {
          throw new Error(`question '${questionId}' is not the pending one ('${pending.id}')`);
        }
        if (typeof answer !== 'string') throw new Error('the answer must be a string');
      },
    },
  );

  let outputGuardrails: RunPlan['outputGuardrails'] = [];

  async function runNode(node: PlanNode, nodeInput: string, history: ChatMessage[]): Promise<string> {
    const messages: ChatMessage[] = [...(node.system ? [{ role: 'system' as const, content: node.system }] : []), ...history];
    messages.push({ role: 'user', content: nodeInput });
    for (let position = 0; position < node.maxTurns; position++) {
      const result = await calls.callModel({
        ...ref,
        nodeId: node.id,
        turn: turnCount++,
        model: node.model,
        messages,
        tools: node.tools,
        script: node.script,
        scriptPosition: position,
        temperature: node.temperature,
        outputGuardrails,
      });
      turns.push({ model: node.model, usage: result.usage }, ...(result.guardrailTurns ?? []));
      if (result.toolCalls.length === 0) return result.text;

      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      for (const call of result.toolCalls) {
        const tool = node.tools.find((t) => t.name === call.tool) ?? null;
        const outcome = await runTool({ ...ref, nodeId: node.id, index: stepCount++, call, tool });
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.tool,
          content: JSON.stringify(outcome.ok ? outcome.result : { error: outcome.error }),
          isError: !outcome.ok,
        });
      }
    }
    throw ApplicationFailure.nonRetryable(`node '${node.id}' used all ${node.maxTurns} turns without a final answer`, 'MaxTurns');
  }

  async function runTool(step: StepInput): Promise<StepOutcome> {
    const builtin = step.tool?.kind === 'builtin' ? step.tool.builtin : null;
    if (!builtin || !WORKFLOW_TOOLS.has(builtin)) return calls.executeTool(step);

    await bookkeeping.beginStep(step);
    let outcome: StepOutcome;
    try {
      outcome = { ok: true, result: await runWorkflowTool(builtin, step) };
    } catch (err) {
      if (isCancellation(err)) throw err;
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    await bookkeeping.completeStep(step, outcome);
    return outcome;
  }

  async function runWorkflowTool(builtin: string, step: StepInput): Promise<unknown> {
    const args = step.call.arguments;
    switch (builtin) {
      case 'ask_human': {
        if (typeof args.question !== 'string' || !args.question) throw new Error('ask_human needs a "question"');
        const questionId = `q_${step.index}`;
        // Pending before the run shows as paused, so an answer that follows the paused status is accepted.
        pending = { id: questionId, question: args.question };
        await bookkeeping.pauseRun({ ...ref, questionId, question: args.question });
        await condition(() => answers.has(questionId));
        const answer = answers.get(questionId)!;
        await bookkeeping.resumeRun({ ...ref, questionId, answer });
        resumed.add(questionId);
        return { answer };
      }
      case 'wait_until': {
        const ms = waitMilliseconds(args, Date.now());
        await sleep(ms);
        return { waited_ms: ms };
      }
      case 'plan_write':
        plan = writePlan(args);
        return verifyPlan(plan);
      case 'verify_plan':
        return verifyPlan(plan);
    }
    throw new Error(`no workflow tool '${builtin}'`);
  }

  async function finish(end: Omit<FinishInput, keyof RunRef | 'turns'>): Promise<void> {
    await bookkeeping.finishRun({ ...ref, ...end, turns });
    await startChild(archiveRunHistory, {
      workflowId: `history-${ref.runId}`,
      taskQueue: AGENT_RUN_TASK_QUEUE,
      args: [ref],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  }

  try {
    // Runs recorded before the activity's rename asked for `startRun`; their histories must replay.
    const runPlan = patched('begin-run') ? await bookkeeping.beginRun(ref) : await bookkeeping.startRun(ref);
    // Plans recorded before guardrails existed have neither list (the history fixture holds one).
    outputGuardrails = runPlan.outputGuardrails ?? [];
    // Input guardrails see the run's input before any model does; a redaction is what the model gets.
    let text = runPlan.input;
    if (runPlan.inputGuardrails?.length) {
      const checked = await bookkeeping.checkInput({ ...ref, text, guardrails: runPlan.inputGuardrails });
      turns.push(...checked.turns);
      text = checked.text;
    }
    for (const [i, node] of runPlan.nodes.entries()) {
      // The thread's earlier turns are the first node's context; later nodes see their input only.
      text = await runNode(node, text, i === 0 ? runPlan.history : []);
    }
    await finish({ status: 'completed', output: text, error: null });
    return { status: 'completed', output: text };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finish({ status: 'cancelled', output: null, error: null }));
      throw err;
    }
    const error = describeFailure(err);
    turns.push(...guardrailTurnsOf(err));
    await finish({ status: 'failed', output: null, error });
    throw ApplicationFailure.nonRetryable(error.message, error.code);
  }
}

/** A guardrail's block carries the usage of the decision calls that made it (activities/guardrail-checks.ts). */
function guardrailTurnsOf(err: unknown): FinishInput['turns'] {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== 'GuardrailBlocked') return [];
  const [turns] = cause.details ?? [];
  return Array.isArray(turns) ? (turns as FinishInput['turns']) : [];
}

/** The run's error: a stable code from the failure's type, and the innermost message. */
function describeFailure(err: unknown): { code: string; message: string } {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  const codes: Record<string, string> = {
    InvalidGraph: 'invalid_graph',
    ModelConfiguration: 'model_error',
    MaxTurns: 'max_turns_exceeded',
    GuardrailBlocked: 'guardrail_blocked',
  };
  return { code: (type && codes[type]) ?? 'run_error', message: cause instanceof Error ? cause.message : String(cause) };
}
