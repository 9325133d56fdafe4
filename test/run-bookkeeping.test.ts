import { expect } from 'chai';
import { Decimal } from 'decimal.js';
import { finishRun, runUsage } from '../activities/runs/lifecycle.js';
import { beginStep, completeStep } from '../activities/runs/steps.js';
import type { StepInput } from '../activities/runs/types.js';
import { readRunEvents } from '../db/run-events.js';
import { listRunSteps } from '../db/run-steps.js';
import { findRun, recordRunEnd } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { recordQueuedRun, recordRunningRun } from './support/recorded-run.js';

/**
 * A run's bookkeeping as its activities write it, on runs recorded as the API records them (no workflow):
 * what a retried attempt, a racing one or a wrong id leaves, and how a run's end settles its subagents.
 */
describe('run bookkeeping on the database', function () {
  this.timeout(60_000);
  let tenant: TestTenant;
  let agentId: string;
  const db = () => testPlatform().db;

  before(async () => {
    tenant = await newTenant('run-bookkeeping');
    agentId = await publishAgent(tenant.key, 'bookkeeping', scriptedGraph([{ text: 'unused' }]));
  });

  /**
   * A run's tool-call trace, attempt after attempt: a retried activity (a worker killed mid-call) begins
   * its step again, and must neither write it twice nor run a finished call again. The step and its
   * `tool_call.started` event go in one round trip (activities/runs/steps.ts).
   */
  describe('beginning and ending a tool call, retried', () => {
    const stepOf = (runId: string, index: number): StepInput => ({
      tenantId: tenant.tenantId,
      runId,
      nodeId: 'main',
      index,
      call: { id: `call_${index}`, tool: 'calculator', arguments: { expression: '6 * 7' } },
      tool: null,
    });
    const started = async (runId: string) => (await readRunEvents(db(), tenant.tenantId, runId, 0)).filter((e) => e.type.startsWith('tool_call.'));
    const steps = (runId: string) => withTenant(db(), tenant.tenantId, (tx) => listRunSteps(tx, tenant.tenantId, runId));

    it('writes a step and its event once however often it is begun, and answers a finished step with how it ended', async () => {
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      const step = stepOf(runId, 1);
      expect(await beginStep(db(), step), 'a new step').to.equal(undefined);
      expect(await beginStep(db(), step), 'begun again while running: the call is made again').to.equal(undefined);
      expect((await steps(runId)).map((s) => [s.index, s.status])).to.deep.equal([[1, 'running']]);
      expect((await started(runId)).map((e) => e.type)).to.deep.equal(['tool_call.started']);

      await completeStep(db(), step, { ok: true, result: 42 });
      expect(await beginStep(db(), step), 'begun after it ended: how it ended').to.deep.equal({ ok: true, result: 42 });
      expect((await steps(runId)).map((s) => [s.index, s.status, s.result])).to.deep.equal([[1, 'completed', 42]]);
      const events = await started(runId);
      expect(events.map((e) => e.type)).to.deep.equal(['tool_call.started', 'tool_call.completed']);
      expect(events[0]!.data).to.deep.include({ step_index: 1, tool: 'calculator', tool_call_id: 'call_1', arguments: { expression: '6 * 7' } });

      const failed = stepOf(runId, 2);
      await beginStep(db(), failed);
      await completeStep(db(), failed, { ok: false, error: 'division by zero' });
      expect(await beginStep(db(), failed)).to.deep.equal({ ok: false, error: 'division by zero' });
    });

    it("refuses a step of a run that does not exist, or is another workspace's, writing neither the step nor an event", async () => {
      const missing = stepOf('run_00000000000000000000000000', 1);
      expect(await beginStep(db(), missing).then(() => undefined, (err: unknown) => err)).to.be.instanceOf(Error);
      expect(await steps(missing.runId)).to.deep.equal([]);
      expect(await readRunEvents(db(), tenant.tenantId, missing.runId, 0)).to.deep.equal([]);

      // The foreign key sees the run whatever the tenant: the step must be refused with its event, not written alone.
      const other = await newTenant('run-steps-other');
      const otherAgent = await publishAgent(other.key, 'steps', scriptedGraph([{ text: 'unused' }]));
      const theirs = await recordRunningRun(db(), { tenantId: other.tenantId, agentId: otherAgent, input: 'hi', source: 'api' });
      expect(await beginStep(db(), stepOf(theirs, 1)).then(() => undefined, (err: unknown) => err)).to.be.instanceOf(Error);
      expect(await steps(theirs), 'as this workspace').to.deep.equal([]);
      expect(await withTenant(db(), other.tenantId, (tx) => listRunSteps(tx, other.tenantId, theirs)), 'as theirs').to.deep.equal([]);
      expect((await readRunEvents(db(), other.tenantId, theirs, 0)).map((e) => e.type)).to.deep.equal(['run.created']);
    });

    it('writes one step and one event when two attempts begin it at once', async () => {
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      const step = stepOf(runId, 1);
      expect(await Promise.all([beginStep(db(), step), beginStep(db(), step), beginStep(db(), step)])).to.deep.equal([undefined, undefined, undefined]);
      expect((await steps(runId)).map((s) => [s.index, s.status])).to.deep.equal([[1, 'running']]);
      expect((await started(runId)).map((e) => e.type)).to.deep.equal(['tool_call.started']);
    });
  });

  /**
   * A run's end in one statement (db/runs.ts recordRunEnd): its duration counted from the run's start in
   * the update itself, and a second end (a retried finish) answering the first without changing it.
   */
  describe('recording a run end', () => {
    const run = (runId: string) => withTenant(db(), tenant.tenantId, (tx) => findRun(tx, tenant.tenantId, runId));
    const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, cost_usd: '0.25' };

    it('counts the duration from the run start and answers the recorded end', async () => {
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      // Longer than the bound below: a timer may fire a little early against the clock the start was taken by.
      await new Promise((resolve) => setTimeout(resolve, 40));
      const ended = await withTenant(db(), tenant.tenantId, (tx) => recordRunEnd(tx, tenant.tenantId, runId, { status: 'completed', output: 'done', error: null, usage }));

      const row = (await run(runId))!;
      expect(row).to.include({ status: 'completed', output: 'done', thread_id: ended.threadId, duration_ms: ended.durationMs, total_tokens: 7 });
      expect(row.ended_at!.getTime()).to.equal(ended.endedAt.getTime());
      expect(ended.durationMs).to.be.at.least(30);
      expect(Math.abs(ended.durationMs - (row.ended_at!.getTime() - row.started_at!.getTime()))).to.be.at.most(1);
    });

    it('leaves an ended run as it ended and answers that end again', async () => {
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      const first = await withTenant(db(), tenant.tenantId, (tx) => recordRunEnd(tx, tenant.tenantId, runId, { status: 'completed', output: 'done', error: null, usage }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const zero = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: '0' };
      const failure = { code: 'internal_error', message: 'late' };
      const again = await withTenant(db(), tenant.tenantId, (tx) => recordRunEnd(tx, tenant.tenantId, runId, { status: 'failed', output: null, error: failure, usage: zero }));

      expect(first.recordedBefore).to.equal(false);
      expect(again).to.deep.equal({ ...first, recordedBefore: true });
      expect(await run(runId)).to.include({ status: 'completed', output: 'done', error: null, total_tokens: 7, duration_ms: first.durationMs });
    });

    it('leaves the thread as a later run touched it when a finished run is finished again', async () => {
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      const finish = { tenantId: tenant.tenantId, runId, status: 'completed' as const, output: 'done', error: null, turns: [] };
      await finishRun(db(), finish);
      const { thread_id: threadId, ended_at: endedAt } = (await run(runId))!;
      // A later run of the thread touches it after this run's end.
      const later = new Date(endedAt!.getTime() + 60_000);
      await db().updateTable('threads').set({ updated_at: later }).where('id', '=', threadId).execute();

      await finishRun(db(), finish); // retried, as after a crash between its commit and the activity's completion
      const thread = await db().selectFrom('threads').select('updated_at').where('id', '=', threadId).executeTakeFirstOrThrow();
      expect(thread.updated_at.getTime()).to.equal(later.getTime());
      expect((await readRunEvents(db(), tenant.tenantId, runId, 0)).filter((e) => e.type === 'run.completed')).to.have.length(1);
    });

    it("refuses another workspace's run and changes nothing", async () => {
      const other = await newTenant('run-bookkeeping-other');
      const runId = await recordRunningRun(db(), { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' });
      const refused = await withTenant(db(), other.tenantId, (tx) => recordRunEnd(tx, other.tenantId, runId, { status: 'completed', output: 'theirs', error: null, usage })).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).to.be.an('error');
      expect(await run(runId)).to.include({ status: 'running', output: null, ended_at: null });
    });
  });

  /**
   * A run's end when the run recorded subagent runs: one it never started (a cancel between recording the
   * child and starting its workflow) is ended as cancelled, having spent nothing; one that ran adds what
   * it spent to the parent's usage and cost.
   */
  describe('finishing a run with subagent runs', () => {
    const run = (runId: string) => withTenant(db(), tenant.tenantId, (tx) => findRun(tx, tenant.tenantId, runId));

    it('ends the subagent runs it never started as cancelled and adds what the others spent to its own', async () => {
      const base = { tenantId: tenant.tenantId, agentId, input: 'hi', source: 'api' as const };
      const parentId = await recordRunningRun(db(), base);
      const unstartedId = await recordQueuedRun(db(), { ...base, parent: { runId: parentId, step: 1, depth: 1 } });
      const ranId = await recordRunningRun(db(), { ...base, parent: { runId: parentId, step: 2, depth: 1 } });
      const ranUsage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, cost_usd: '0.5' };
      await withTenant(db(), tenant.tenantId, (tx) => recordRunEnd(tx, tenant.tenantId, ranId, { status: 'completed', output: 'done', error: null, usage: ranUsage }));

      const turns = [{ model: 'scripted/finisher', usage: { prompt_tokens: 100, completion_tokens: 20 } }];
      await finishRun(db(), { tenantId: tenant.tenantId, runId: parentId, status: 'completed', output: 'all done', error: null, turns });

      const unstarted = (await run(unstartedId))!;
      expect(unstarted).to.include({ status: 'cancelled', prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(new Decimal(unstarted.cost_usd!).isZero()).to.equal(true);
      expect((await readRunEvents(db(), tenant.tenantId, unstartedId, 0)).map((e) => e.type)).to.deep.equal(['run.created', 'run.cancelled']);

      const own = runUsage(turns);
      const parent = (await run(parentId))!;
      expect(parent).to.include({ status: 'completed', prompt_tokens: 107, completion_tokens: 23, total_tokens: 130 });
      expect(new Decimal(parent.cost_usd!).equals(new Decimal(own.cost_usd!).plus('0.5'))).to.equal(true);
      const end = (await readRunEvents(db(), tenant.tenantId, parentId, 0)).at(-1)!;
      expect(end.type).to.equal('run.completed');
      expect(end.data.usage).to.include({ prompt_tokens: 107, completion_tokens: 23, total_tokens: 130 });
    });
  });
});
