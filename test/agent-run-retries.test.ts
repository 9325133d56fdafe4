import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'chai';
import { GuardrailConfigError } from '../activities/guardrails/errors.js';
import type { RunRef } from '../activities/runs/types.js';
import type { agentRun } from '../workflows/agent-run.js';
import { AGENT_RUN_WORKFLOW_TYPE, agentRunInput } from '../workflows/agent-run-api.js';
import { BOOKKEEPING_RETRY } from '../workflows/bookkeeping-retry.js';
import { ActivityLog, bookkeepingMocks, builtinTool, planNode, runPlan, runRef, textTurn, toolCallTurn } from './support/agent-run-mocks.js';
import { failure } from './support/failure.js';
import { WorkflowTestEnvironment } from './support/workflow-test-environment.js';

/**
 * The agent workflow's retries are finite: a bookkeeping activity that fails for good ends the run as
 * failed, with a reason a person can read, instead of being retried (each retry costing a worker) forever.
 * A real worker runs the workflow against mocked activities, in the style of agent-run-workflow.test.ts.
 */
describe('agentRun workflow: finite retries', () => {
  let env: WorkflowTestEnvironment;
  before(async () => (env = await WorkflowTestEnvironment.open()));
  after(() => env?.teardown());

  /** Starts the run as the API does (the workflow id is the run id), on the test worker's queue. */
  const startRun = (taskQueue: string, ref: RunRef) =>
    env.start((client) => client.workflow.start<typeof agentRun>(AGENT_RUN_WORKFLOW_TYPE, { taskQueue, workflowId: ref.runId, args: [agentRunInput(ref)] }));

  const guardrail = { name: 'no-secrets', kind: 'regex' as const, target: 'input' as const, action: 'block' as const, config: { pattern: 'x' } };

  it(`gives a check that always fails ${BOOKKEEPING_RETRY.maximumAttempts} attempts, then fails the run saying so`, async () => {
    const ref = runRef();
    const plan = runPlan(ref, { inputGuardrails: [guardrail] });
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      // Retryable, as a lost database connection is; the short delay stands in for the policy's backoff,
      // which would make this test take minutes. The number of attempts is the policy's own.
      checkInput: async () => {
        throw ApplicationFailure.create({ type: 'ConnectionError', message: 'the database refused the connection', nextRetryDelay: '10 milliseconds' });
      },
      callModel: async () => textTurn('never'),
    });

    const error = await env.withWorker(activities, async (taskQueue) => failure((await startRun(taskQueue, ref)).result()));

    expect(error).to.be.instanceOf(WorkflowFailedError);
    expect(log.inputsOf('checkInput')).to.have.length(BOOKKEEPING_RETRY.maximumAttempts);
    expect(log.inputsOf('callModel')).to.be.empty;
    expect(log.inputsOf('finishRun')).to.deep.equal([
      {
        ...ref,
        status: 'failed',
        output: null,
        error: { code: 'run_error', message: 'checkInput gave up after its retries: the database refused the connection' },
        turns: [],
      },
    ]);
  });

  it('rides out a check that fails a few times, as through a Postgres restart', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { inputGuardrails: [guardrail] });
    let attempts = 0;
    const activities = new ActivityLog().record({
      ...bookkeepingMocks(plan),
      checkInput: async ({ text }) => {
        if (++attempts <= 2) throw ApplicationFailure.create({ message: 'the database is starting up', nextRetryDelay: '10 milliseconds' });
        return { text, turns: [] };
      },
      callModel: async () => textTurn('done'),
    });

    const result = await env.withWorker(activities, async (taskQueue) => (await startRun(taskQueue, ref)).result());

    expect(result).to.deep.equal({ status: 'completed', output: 'done' });
    expect(attempts).to.equal(3);
  });

  it('does not retry a stored guardrail the engine refuses: the run fails at once, naming it', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { inputGuardrails: [guardrail] });
    const refused = new GuardrailConfigError('legacy', [{ field: 'config.pattern', message: 'uses the backreference \\1, which no linear-time engine runs' }]);
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(plan),
      checkInput: async () => {
        throw refused;
      },
      callModel: async () => textTurn('never'),
    });

    await env.withWorker(activities, async (taskQueue) => failure((await startRun(taskQueue, ref)).result()));

    expect(log.inputsOf('checkInput')).to.have.length(1);
    expect(log.inputsOf('finishRun').map((end) => end.error)).to.deep.equal([{ code: 'run_error', message: refused.message }]);
  });

  it(`gives a local bookkeeping step that always fails ${BOOKKEEPING_RETRY.maximumAttempts} attempts, then fails the run`, async () => {
    const ref = runRef();
    const log = new ActivityLog();
    const activities = log.record({
      ...bookkeepingMocks(runPlan(ref, { nodes: [planNode({ tools: [builtinTool('plan_write')] })] })),
      // The run record's transitions are local activities (workflows/agent-run.ts); their policy is the same.
      beginStep: async () => {
        throw ApplicationFailure.create({ type: 'ConnectionError', message: 'the database refused the connection', nextRetryDelay: '10 milliseconds' });
      },
      callModel: async ({ scriptPosition }) => (scriptPosition === 0 ? toolCallTurn({ tool: 'plan_write', arguments: { steps: ['one'] } }) : textTurn('never')),
    });

    const error = await env.withWorker(activities, async (taskQueue) => failure((await startRun(taskQueue, ref)).result()));

    expect(error).to.be.instanceOf(WorkflowFailedError);
    expect(log.inputsOf('beginStep')).to.have.length(BOOKKEEPING_RETRY.maximumAttempts);
    expect(log.inputsOf('finishRun').map((end) => end.status)).to.deep.equal(['failed']);
  });

  it('gives every bookkeeping activity a finite retry policy (as recorded in the history)', async () => {
    const ref = runRef();
    const plan = runPlan(ref, { inputGuardrails: [guardrail] });
    const activities = new ActivityLog().record({ ...bookkeepingMocks(plan), callModel: async () => textTurn('done') });

    const history = await env.withWorker(activities, async (taskQueue) => {
      const handle = await startRun(taskQueue, ref);
      await handle.result();
      return handle.fetchHistory();
    });

    const scheduled = (history.events ?? []).flatMap((event) => (event.activityTaskScheduledEventAttributes ? [event.activityTaskScheduledEventAttributes] : []));
    // beginRun and finishRun are local activities: markers in the history, not scheduled tasks.
    expect(scheduled.map((attributes) => attributes.activityType?.name)).to.deep.equal(['checkInput', 'callModel']);
    for (const attributes of scheduled) {
      expect(attributes.retryPolicy?.maximumAttempts, attributes.activityType?.name ?? '').to.be.within(1, BOOKKEEPING_RETRY.maximumAttempts);
    }
  });
});
