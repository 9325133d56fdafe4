import { expect } from 'chai';
import { Decimal } from 'decimal.js';
import { finishRun, runUsage } from '../activities/runs/lifecycle.js';
import { readRunEvents } from '../db/run-events.js';
import { findRun, recordRunEnd } from '../db/runs.js';
import { withTenant } from '../db/tenant-transaction.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { newTenant, type TestTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { recordQueuedRun, recordRunningRun } from './support/recorded-run.js';

/**
 * A run's end as finishRun records it when the run recorded subagent runs: one it never started (a
 * cancel between recording the child and starting its workflow) is ended as cancelled, having spent
 * nothing; one that ran adds what it spent to the parent's usage and cost.
 */
describe('finishing a run with subagent runs', function () {
  this.timeout(60_000);
  let tenant: TestTenant;
  let agentId: string;

  before(async () => {
    tenant = await newTenant('finish-run');
    agentId = await publishAgent(tenant.key, 'finisher', scriptedGraph([{ text: 'unused' }]));
  });

  const db = () => testPlatform().db;
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
