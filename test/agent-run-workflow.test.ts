import { Context } from '@temporalio/activity';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { expect } from 'chai';
import type { RunRef } from '../activities/runs/types.js';
import type { agentRun } from '../workflows/agent-run.js';
import { MAX_CONVERSATION_CHARS } from '../workflows/conversation-budget.js';
import { AGENT_RUN_VERSION, AGENT_RUN_WORKFLOW_TYPE, agentRunFailure, agentRunInput, answerUpdate, pendingQuestionQuery } from '../workflows/agent-run-api.js';
import {
  ActivityLog,
  bookkeepingMocks,
  builtinTool,
  decisionTurn,
  Gate,
  httpTool,
  planNode,
  runPlan,
  runRef,
  textTurn,
  toolCallTurn,
  TURN_USAGE,
} from './support/agent-run-mocks.js';
import { failure } from './support/failure.js';
import { WorkflowTestEnvironment } from './support/workflow-test-environment.js';

/**
 * The agent workflow's branches that are slow or impossible to reach end to end, run by a real worker
 * against mocked activities. Each test checks the workflow's contract only: the activities it calls and
 * with what, its result or failure, its update and query.
 */
describe('agentRun workflow', () => {
  let env: WorkflowTestEnvironment;
  before(async () => {
    env = await WorkflowTestEnvironment.open();
  });
  after(async () => {
    await env?.teardown();
  });

  /** Starts the run as the API does: the workflow id is the run id. */
  function startRun(taskQueue: string, ref: RunRef) {
    return env.start((client) => client.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, { taskQueue, workflowId: ref.runId, args: [agentRunInput(ref)] }));
  }

  /** The workflow's failure: a WorkflowFailedError whose cause says why. */
  async function runFailure(result: Promise<unknown>): Promise<Error | undefined> {
    const error = await failure(result);
    expect(error).to.be.instanceOf(WorkflowFailedError);
    return error.cause as Error | undefined;
  }

  it('completes: guarded input, each node fed the last one’s answer, the end recorded (which queues the history), no child', async () => {
    const ref = runRef();
    const guardrail = { name: 'no-secrets', kind: 'regex' as const, target: 'input' as const, action: 'redact' as const, config: {} };
    const plan = runPlan(ref, {
      input: 'my secret-42',
      history: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
      ],
      inputGuardrails: [guardrail],
      nodes: [
        planNode({ id: 'draft', system: 'Be brief.', tools: [httpTool('lookup')] }),
        planNode({ id: 'review' }),
      ],
    });
    const replies = [toolCallTurn({ tool: 'lookup', arguments: { q: 'x' } }), textTurn('a draft'), textTurn('the final answer')];
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      checkInput: async () => ({ text: 'my [REDACTED]', turns: [decisionTurn('guard/model')] }),
      callModel: async (input) => replies[input.turn]!,
      executeTool: async () => ({ ok: true, result: { found: 'y' } }),
    });

    const result = await env.withWorker(activities, async (taskQueue) => (await startRun(taskQueue, ref)).result());

    expect(result).to.deep.equal({ status: 'completed', output: 'the final answer' });
    expect(log.names()).to.deep.equal(['beginRun', 'checkInput', 'callModel', 'executeTool', 'callModel', 'callModel', 'finishRun']);
    expect(log.inputsOf('checkInput')).to.deep.equal([{ ...ref, text: 'my secret-42', guardrails: [guardrail] }]);
    const [first, second, third] = log.inputsOf('callModel');
    expect(first!.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: 'my [REDACTED]' },
    ]);
    expect(second!.messages.at(-1)).to.deep.include({ role: 'tool', toolName: 'lookup', content: JSON.stringify({ found: 'y' }), isError: false });
    // A later node sees its input only, not the thread's history.
    expect(third).to.deep.include({ nodeId: 'review', messages: [{ role: 'user', content: 'a draft' }] });
    expect(log.inputsOf('executeTool')).to.deep.equal([{ ...ref, nodeId: 'draft', index: 0, call: replies[0]!.toolCalls[0], tool: httpTool('lookup') }]);
    expect(log.inputsOf('finishRun')).to.deep.equal([
      {
        ...ref,
        status: 'completed',
        output: 'the final answer',
        error: null,
        turns: [decisionTurn('guard/model'), ...replies.map(() => ({ model: 'mock/model', usage: TURN_USAGE }))],
      },
    ]);
    // finishRun queued the history for the run-history archiver: no child workflow per run any more.
    expect(await env.childrenOf(ref.runId)).to.deep.equal([]);
  });

  it('runs plan_write, verify_plan and wait_until in the workflow, each a recorded step', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { nodes: [planNode({ tools: ['plan_write', 'verify_plan', 'wait_until'].map(builtinTool) })] });
    const replies = [
      toolCallTurn({ tool: 'plan_write', arguments: { steps: [{ title: 'draft', done: true }, 'review'] } }, { tool: 'wait_until', arguments: { duration: '20ms' } }),
      toolCallTurn({ tool: 'verify_plan' }, { tool: 'wait_until', arguments: {} }),
      textTurn('planned'),
    ];
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      callModel: async (input) => replies[input.turn]!,
      executeTool: async () => ({ ok: false, error: 'not a workflow tool' }),
    });

    const result = await env.withWorker(activities, async (taskQueue) => (await startRun(taskQueue, ref)).result());

    expect(result).to.deep.equal({ status: 'completed', output: 'planned' });
    expect(log.inputsOf('executeTool')).to.be.empty;
    expect(log.inputsOf('beginStep').map((step) => [step.index, step.call.tool])).to.deep.equal([
      [0, 'plan_write'],
      [1, 'wait_until'],
      [2, 'verify_plan'],
      [3, 'wait_until'],
    ]);
    const planState = { steps: [{ title: 'draft', done: true }, { title: 'review', done: false }], done: ['draft'], pending: ['review'], complete: false };
    const outcomes = log.argsOf('completeStep').map(([, outcome]) => outcome);
    expect(outcomes.slice(0, 3)).to.deep.equal([
      { ok: true, result: planState },
      { ok: true, result: { waited_ms: 20 } },
      { ok: true, result: planState },
    ]);
    // A workflow tool's error is the model's to read, not the run's end.
    expect(outcomes[3]).to.have.property('ok', false);
    expect(outcomes[3]).to.have.property('error').that.matches(/wait_until needs/);
  });

  it('leaves a run of a newer workflow version to a worker that knows it: its task fails and is retried, nothing runs', async () => {
    const ref = runRef();
    const log = new ActivityLog();
    const activities = log.record(bookkeepingMocks(runPlan(ref, {})));

    const taskFailures = await env.withWorker(activities, async (taskQueue) => {
      const handle = await env.start((client) =>
        client.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, { taskQueue, workflowId: ref.runId, args: [{ ...agentRunInput(ref), version: AGENT_RUN_VERSION + 1 }] }),
      );
      for (let attempt = 0; attempt < 100; attempt++) {
        const events = (await handle.fetchHistory()).events ?? [];
        const failed = events.filter((event) => event.workflowTaskFailedEventAttributes);
        if (failed.length > 0) return { failed, status: (await handle.describe()).status.name };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { failed: [], status: 'never failed a task' };
    });

    expect(taskFailures.status).to.equal('RUNNING');
    expect(taskFailures.failed[0]!.workflowTaskFailedEventAttributes!.failure!.message).to.include(`workflow version ${AGENT_RUN_VERSION + 1}`);
    expect(log.names()).to.deep.equal([]);
  });

  it('fails with max_turns_exceeded when a node’s model keeps asking for tools', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { nodes: [planNode({ maxTurns: 3, tools: [httpTool('lookup')] })] });
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      callModel: async () => toolCallTurn({ tool: 'lookup' }),
      executeTool: async () => ({ ok: true, result: 'try again' }),
    });

    const cause = await env.withWorker(activities, async (taskQueue) => runFailure((await startRun(taskQueue, ref)).result()));

    expect(cause).to.be.instanceOf(ApplicationFailure);
    expect(cause).to.include({ type: 'max_turns_exceeded', nonRetryable: true });
    expect(log.inputsOf('callModel')).to.have.length(3);
    expect(log.inputsOf('executeTool')).to.have.length(3);
    const [finish, ...more] = log.inputsOf('finishRun');
    expect(more).to.be.empty;
    expect(finish).to.deep.include({ ...ref, status: 'failed', output: null });
    expect(finish!.error).to.have.property('code', 'max_turns_exceeded');
    expect(finish!.error!.message).to.include('3 turns');
    expect(finish!.turns).to.have.length(3);
  });

  it(`fails with context_length_exceeded once tool results grow a node's conversation past ${MAX_CONVERSATION_CHARS} characters, calling nothing more`, async () => {
    const ref = runRef();
    const plan = runPlan(ref, { nodes: [planNode({ tools: ['plan_write', 'verify_plan'].map(builtinTool) })] });
    // A plan of ~250k characters: written (its arguments and its result in the conversation, ~750k), then
    // verified three times in one turn, each result the whole plan again.
    const steps = Array.from({ length: 250 }, (_, i) => `step ${i} `.padEnd(1_000, '.'));
    const replies = [
      toolCallTurn({ tool: 'plan_write', arguments: { steps } }),
      toolCallTurn({ tool: 'verify_plan' }, { tool: 'verify_plan' }, { tool: 'verify_plan' }),
      textTurn('never asked'),
    ];
    const log = new ActivityLog();
    const activities = log.record({ ...bookkeepingMocks(plan), callModel: async (input) => replies[input.turn]! });

    const cause = await env.withWorker(activities, async (taskQueue) => runFailure((await startRun(taskQueue, ref)).result()));

    expect(cause).to.be.instanceOf(ApplicationFailure);
    expect(cause).to.include({ type: 'context_length_exceeded', nonRetryable: true });
    expect(log.inputsOf('callModel')).to.have.length(2);
    expect(log.inputsOf('beginStep').map((step) => step.call.tool)).to.deep.equal(['plan_write', 'verify_plan']);
    const [finish, ...more] = log.inputsOf('finishRun');
    expect(more).to.be.empty;
    expect(finish!.error).to.have.property('code', 'context_length_exceeded');
    expect(finish!.error!.message).to.match(/the conversation of node 'main' reached \d+ characters, over the limit of 1000000/);
  });

  it('fails with guardrail_blocked when an input guardrail blocks, counting its decision calls', async () => {
    const ref = runRef();
    const guardrail = { name: 'on-topic', kind: 'semantic' as const, target: 'input' as const, action: 'block' as const, config: {} };
    const plan = runPlan(ref, { inputGuardrails: [guardrail] });
    const decisions = [decisionTurn('guard/a'), decisionTurn('guard/b')];
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      // Thrown retryable on purpose: the workflow's retry policy alone must keep a block from being retried.
      checkInput: async () => {
        throw ApplicationFailure.create({ type: 'GuardrailBlocked', message: "blocked by guardrail 'on-topic'", details: [decisions] });
      },
      callModel: async () => textTurn('never'),
    });

    const cause = await env.withWorker(activities, async (taskQueue) => runFailure((await startRun(taskQueue, ref)).result()));

    expect(cause).to.include({ type: 'guardrail_blocked', nonRetryable: true });
    expect(log.inputsOf('checkInput')).to.have.length(1); // a block is not retried
    expect(log.inputsOf('callModel')).to.be.empty;
    expect(log.inputsOf('finishRun')).to.deep.equal([
      { ...ref, status: 'failed', output: null, error: { code: 'guardrail_blocked', message: "blocked by guardrail 'on-topic'" }, turns: decisions },
    ]);
  });

  it('fails with guardrail_blocked when an output guardrail blocks a turn, keeping the earlier turns’ usage', async () => {
    const ref = runRef();
    const guardrail = { name: 'no-pii', kind: 'pii' as const, target: 'output' as const, action: 'block' as const, config: {} };
    const plan = runPlan(ref, { outputGuardrails: [guardrail], nodes: [planNode({ tools: [httpTool('lookup')] })] });
    // The blocked turn's own usage comes back in the failure, since its result never reaches the workflow.
    const blockedTurn = [{ model: 'mock/model', usage: TURN_USAGE }, decisionTurn('guard/a')];
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      callModel: async (input) => {
        if (input.turn === 0) return toolCallTurn({ tool: 'lookup' });
        throw agentRunFailure('GuardrailBlocked', "blocked by guardrail 'no-pii'", [blockedTurn]);
      },
      executeTool: async () => ({ ok: true, result: 'an email address' }),
    });

    const cause = await env.withWorker(activities, async (taskQueue) => runFailure((await startRun(taskQueue, ref)).result()));

    expect(cause).to.include({ type: 'guardrail_blocked' });
    const calls = log.inputsOf('callModel');
    expect(calls).to.have.length(2);
    expect(calls.every((input) => input.outputGuardrails.length === 1 && input.outputGuardrails[0]!.name === 'no-pii')).to.be.true;
    expect(log.inputsOf('finishRun')).to.deep.equal([
      {
        ...ref,
        status: 'failed',
        output: null,
        error: { code: 'guardrail_blocked', message: "blocked by guardrail 'no-pii'" },
        turns: [{ model: 'mock/model', usage: TURN_USAGE }, ...blockedTurn],
      },
    ]);
  });

  it('ends cancelled when cancelled during a tool call, telling the tool and recording the end', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { nodes: [planNode({ tools: [httpTool('slow')] })] });
    const toolStarted = new Gate();
    const toolCancelled = new Gate();
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      callModel: async () => toolCallTurn({ tool: 'slow' }),
      executeTool: async () => {
        const context = Context.current();
        const heartbeat = setInterval(() => context.heartbeat(), 20);
        toolStarted.open();
        try {
          return await context.cancelled;
        } catch (err) {
          if (err instanceof CancelledFailure) toolCancelled.open();
          throw err;
        } finally {
          clearInterval(heartbeat);
        }
      },
      // The workflow stops waiting for the tool as soon as it asks it to stop (TRY_CANCEL); holding the
      // end until the tool has heard lets the tool's report reach a still-open workflow, not a closed one.
      finishRun: () => toolCancelled.promise,
    });

    const cause = await env.withWorker(activities, async (taskQueue) => {
      const handle = await startRun(taskQueue, ref);
      await toolStarted.promise;
      await handle.cancel();
      const cause = await runFailure(handle.result());
      await toolCancelled.promise;
      return cause;
    });

    expect(cause).to.be.instanceOf(CancelledFailure);
    expect(log.inputsOf('executeTool')).to.have.length(1);
    // finishRun is a local activity: the workflow task that ran it may be refused (the tool's cancellation
    // arrived while it was closing the workflow) and retried, which runs it again. It is idempotent; what
    // matters is that every attempt records the same end.
    const ends = log.inputsOf('finishRun');
    expect(ends).to.have.length.within(1, 2);
    for (const end of ends) expect(end).to.deep.equal({ ...ref, status: 'cancelled', output: null, error: null, turns: [{ model: 'mock/model', usage: TURN_USAGE }] });
  });

  it('takes an answer only for the pending question, and resumes the run with it', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { nodes: [planNode({ tools: [builtinTool('ask_human')] })] });
    const replies = [toolCallTurn({ tool: 'ask_human', arguments: { question: 'Which colour?' } }), textTurn('Blue it is.')];
    const firstTurnMayEnd = new Gate();
    const lastTurnMayEnd = new Gate();
    const paused = new Gate<{ questionId: string; question: string }>();
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      pauseRun: async (input) => paused.open(input),
      callModel: async (input) => {
        await (input.turn === 0 ? firstTurnMayEnd : lastTurnMayEnd).promise;
        return replies[input.turn]!;
      },
    });

    await env.withWorker(activities, async (taskQueue) => {
      const handle = await startRun(taskQueue, ref);
      const answer = (args: { questionId?: string; answer: string }) => handle.executeUpdate(answerUpdate, { args: [args] });

      // Before any question.
      expect(await failure(answer({ answer: 'too early' }))).to.be.instanceOf(WorkflowUpdateFailedError);
      firstTurnMayEnd.open();

      const { questionId, question } = await paused.promise;
      expect(question).to.equal('Which colour?');
      expect(await handle.query(pendingQuestionQuery)).to.deep.equal({ id: questionId, question });

      // Another question's id: rejected, and the run still waits on its own.
      const wrong = await failure(answer({ questionId: `${questionId}-other`, answer: 'red' }));
      expect(wrong).to.be.instanceOf(WorkflowUpdateFailedError);
      expect((wrong.cause as Error | undefined)?.message).to.include(`${questionId}-other`);
      expect(await handle.query(pendingQuestionQuery)).to.deep.equal({ id: questionId, question });
      expect(log.inputsOf('resumeRun')).to.be.empty;

      expect(await answer({ questionId, answer: 'blue' })).to.deep.equal({ questionId });
      // The update answers once the run is running again.
      expect(log.inputsOf('resumeRun')).to.deep.equal([{ ...ref, questionId, answer: 'blue' }]);
      expect(await handle.query(pendingQuestionQuery)).to.equal(null);

      // Answered already: the same answer again is rejected.
      expect(await failure(answer({ questionId, answer: 'blue' }))).to.be.instanceOf(WorkflowUpdateFailedError);
      lastTurnMayEnd.open();
      expect(await handle.result()).to.deep.equal({ status: 'completed', output: 'Blue it is.' });
    });

    expect(log.inputsOf('callModel')[1]!.messages.at(-1)).to.deep.include({ role: 'tool', toolName: 'ask_human', content: JSON.stringify({ answer: 'blue' }) });
    expect(log.inputsOf('pauseRun')).to.have.length(1);
    expect(log.argsOf('completeStep').map(([step, outcome]) => [step.call.tool, outcome])).to.deep.equal([['ask_human', { ok: true, result: { answer: 'blue' } }]]);
    expect(log.inputsOf('finishRun')).to.have.length(1);
    expect(log.inputsOf('finishRun')[0]).to.include({ status: 'completed', output: 'Blue it is.' });
  });

  it('makes model turns and tool calls as local activities when the plan says so (RUN_CALLS=local)', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { calls: 'local', nodes: [planNode({ tools: [httpTool('lookup')] })] });
    const replies = [toolCallTurn({ tool: 'lookup' }), textTurn('looked up')];
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      callModel: async (input) => replies[input.turn]!,
      executeTool: async () => ({ ok: true, result: 1 }),
    });

    const history = await env.withWorker(activities, async (taskQueue) => {
      const handle = await startRun(taskQueue, ref);
      expect(await handle.result()).to.deep.equal({ status: 'completed', output: 'looked up' });
      return handle.fetchHistory();
    });

    expect(log.names()).to.deep.equal(['beginRun', 'callModel', 'executeTool', 'callModel', 'finishRun']);
    const events = history.events ?? [];
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).to.be.empty;
    expect(events.filter((e) => e.markerRecordedEventAttributes)).to.have.length(5);
  });

  for (const [status, end] of [
    ['completed', { status: 'completed', output: 'said before', error: null }],
    ['failed', { status: 'failed', output: null, error: { code: 'model_error', message: 'the model failed before' } }],
    ['cancelled', { status: 'cancelled', output: null, error: null }],
  ] as const) {
    it(`ends ${status} as recorded when beginRun finds the run had begun and ended: nothing runs, nothing is recorded again`, async () => {
      const ref = runRef();
      const log = new ActivityLog();
      const activities = log.record({ ...bookkeepingMocks({ ...ref, ended: end }), callModel: async () => textTurn('never') });

      const outcome = await env.withWorker(activities, async (taskQueue) => {
        const result = (await startRun(taskQueue, ref)).result();
        return status === 'completed' ? result : runFailure(result);
      });

      expect(log.names()).to.deep.equal(['beginRun']);
      if (status === 'completed') expect(outcome).to.deep.equal({ status: 'completed', output: 'said before' });
      if (status === 'failed') {
        expect(outcome).to.be.instanceOf(ApplicationFailure);
        expect(outcome).to.include({ type: 'model_error', message: 'the model failed before', nonRetryable: true });
      }
      if (status === 'cancelled') expect(outcome).to.be.instanceOf(CancelledFailure);
    });
  }
});
