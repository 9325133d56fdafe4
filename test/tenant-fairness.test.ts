import { Context } from '@temporalio/activity';
import { expect } from 'chai';
import { tenantFairness } from '../activities/tenant-fairness.js';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { createSuite } from './support/evals.js';
import { testPlatform } from './support/global.js';
import { WorkflowTestEnvironment } from './support/workflow-test-environment.js';

/**
 * Workspaces share task queues and worker slots. Every workspace's workflow carries its tenant id as
 * Temporal's fairness key (activities/tenant-fairness.ts), and the server hands out waiting tasks
 * round-robin across keys (temporal-dev.yaml), so one workspace's backlog does not hold another's back.
 */
describe('tenant fairness', function () {
  this.timeout(120_000);

  it("starts a workspace's runs, experiments, document conversions and schedules with its tenant id as the fairness key", async () => {
    const tenant = await newTenant('fairness-keys');
    const agentId = await publishAgent(tenant.key, 'fair', scriptedGraph([{ text: 'done' }]));
    const { temporal } = testPlatform();
    const fairnessKeyOf = async (workflowId: string) => (await temporal.workflow.getHandle(workflowId).describe()).priority?.fairnessKey;

    // The answer is the run's event stream; its first event names the run.
    const run = await call('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hello' } });
    expect(run.status).to.equal(200);
    const runId = /"run_id":"(run_[^"]+)"/.exec(String(run.body))?.[1];
    expect(await fairnessKeyOf(runId!)).to.equal(tenant.tenantId);

    await call('POST', '/v1/knowledge', { key: tenant.key, body: { name: 'fair-kb' } });
    // Above the inline limit: converted by a workflow.
    const document = await call('POST', '/v1/knowledge/fair-kb/documents', { key: tenant.key, body: { title: 'Long', text: 'word '.repeat(60_000) } });
    expect(document.status, JSON.stringify(document.body)).to.equal(202);
    expect(await fairnessKeyOf(`ingest-${document.body.document.id}`)).to.equal(tenant.tenantId);

    const suite = await createSuite(tenant.key, agentId, 'fair-suite');
    await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key: tenant.key, body: { cases: [{ input: 'one' }] } });
    const experiment = await call('POST', '/v1/evals/experiments', { key: tenant.key, body: { suite: suite.id, variants: [{ name: 'v' }] } });
    expect(experiment.status, JSON.stringify(experiment.body)).to.equal(201);
    expect(await fairnessKeyOf(experiment.body.experiment.id)).to.equal(tenant.tenantId);

    const schedule = await call('POST', '/v1/schedules', { key: tenant.key, body: { agent: agentId, input: 'x', cron: '0 0 1 1 *', paused: true } });
    expect(schedule.status, JSON.stringify(schedule.body)).to.equal(201);
    try {
      const action = (await temporal.schedule.getHandle(schedule.body.schedule.id).describe()).action;
      expect(action.type === 'startWorkflow' ? action.priority?.fairnessKey : action.type).to.equal(tenant.tenantId);
    } finally {
      await call('DELETE', `/v1/schedules/${schedule.body.schedule.id}`, { key: tenant.key });
    }
  });

  describe('on the server', () => {
    let env: WorkflowTestEnvironment;
    before(async () => {
      env = await WorkflowTestEnvironment.open();
    });
    after(async () => {
      await env?.teardown();
    });

    it("hands a waiting task of a second workspace out next, ahead of the first workspace's backlog", async () => {
      // The order the one slot takes the activities in; each holds it 100 ms, so the rest queue up.
      const served: string[] = [];
      const checkDatabase = async () => {
        served.push(Context.current().info.workflowExecution?.workflowId ?? '');
        await new Promise((resolve) => setTimeout(resolve, 100));
        return true;
      };
      await env.withWorker(
        { checkDatabase },
        async (taskQueue) => {
          const start = (id: string, tenantId: string) =>
            env.start((client) => client.workflow.start('ping', { taskQueue, workflowId: id, args: [id], priority: tenantFairness(tenantId) }));
          const crowd = await Promise.all(Array.from({ length: 15 }, (_, i) => start(`fair-crowd-${i}-${Date.now()}`, 'ten_crowding')));
          // Once the crowd's activities wait for the one slot.
          await new Promise((resolve) => setTimeout(resolve, 300));
          const newcomer = await start(`fair-newcomer-${Date.now()}`, 'ten_newcomer');
          await Promise.all([...crowd, newcomer].map((handle) => handle.result()));
          expect(served).to.have.length(16);
          // First in, first out would serve it last (16th); round-robin serves it within a turn or two.
          expect(served.indexOf(newcomer.workflowId), served.join(', ')).to.be.below(5);
        },
        { maxConcurrentActivityTaskExecutions: 1 },
      );
    });
  });
});
