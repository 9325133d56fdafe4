import { expect } from 'chai';
import { PING_WORKFLOW_TYPE } from '../workflows/ping-api.js';
import type { ping } from '../workflows/ping.js';
import { ALL_TASK_QUEUES } from '../workflows/task-queues.js';
import { testPlatform } from './support/global.js';

describe('Temporal', () => {
  for (const taskQueue of ALL_TASK_QUEUES) {
    it(`runs a workflow on task queue '${taskQueue}' through the real server and a real worker`, async () => {
      const { temporal } = testPlatform();
      const result = await temporal.workflow.execute<typeof ping>(PING_WORKFLOW_TYPE, {
        taskQueue,
        workflowId: `ping-${taskQueue}-${Date.now()}`,
        args: ['hello'],
        workflowExecutionTimeout: '30 seconds',
      });
      expect(result).to.deep.equal({ echo: 'hello', database: true });
    });
  }

  it('has the search attributes runs are listed by', async function () {
    if (process.env.TEMPORAL_ADDRESS) this.skip(); // an external server is registered by its operator (README)
    const { temporal } = testPlatform();
    const { customAttributes } = await temporal.connection.operatorService.listSearchAttributes({ namespace: temporal.options.namespace });
    for (const name of ['TenantId', 'AgentId', 'RunSource', 'ExperimentId']) expect(customAttributes?.[name], name).to.equal(2); // 2 = Keyword
  });

  it('answers /readyz with both dependencies reachable', async () => {
    const response = await fetch(`${testPlatform().apiUrl}/readyz`);
    expect(response.status).to.equal(200);
    expect(await response.json()).to.deep.equal({ status: 'ready', checks: { database: true, temporal: true } });
  });
});
