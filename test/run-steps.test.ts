import { expect } from 'chai';
import { beginStep, completeStep } from '../activities/runs/steps.js';
import type { StepInput } from '../activities/runs/types.js';
import { readRunEvents } from '../db/run-events.js';
import { listRunSteps } from '../db/run-steps.js';
import { withTenant } from '../db/tenant-transaction.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { recordRunningRun } from './support/recorded-run.js';

/**
 * A run's tool-call trace as its activities write it, attempt after attempt: a retried activity (a
 * worker killed mid-call) begins its step again, and must neither write it twice nor run a finished
 * call again. The step and its `tool_call.started` event go in one round trip (activities/runs/steps.ts).
 */
describe('run steps: beginning and ending a tool call, retried', function () {
  this.timeout(60_000);
  let tenant: TestTenant;
  let agentId: string;

  before(async () => {
    tenant = await newTenant('run-steps');
    agentId = await publishAgent(tenant.key, 'steps', scriptedGraph([{ text: 'unused' }]));
  });

  const db = () => testPlatform().db;
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
