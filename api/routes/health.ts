import { isDatabaseReachable } from '../../db/database.js';
import { defineOperation } from '../operation.js';

const status = { type: 'object', required: ['status'], properties: { status: { type: 'string' }, checks: { type: 'object' } } };

export const healthz = defineOperation({
  operationId: 'getHealth',
  method: 'get',
  path: '/healthz',
  tag: 'Health',
  summary: 'Liveness: the process is up',
  access: 'public',
  responses: { 200: { description: 'Alive', schema: status } },
  handler: async () => ({ status: 200, body: { status: 'ok' } }),
});

export const readyz = defineOperation({
  operationId: 'getReadiness',
  method: 'get',
  path: '/readyz',
  tag: 'Health',
  summary: 'Readiness: Postgres and Temporal answer',
  access: 'public',
  responses: {
    200: { description: 'Ready', schema: status },
    503: { description: 'A dependency is unreachable; `checks` says which', schema: status },
  },
  handler: async ({ deps }) => {
    const [database, temporal] = await Promise.all([isDatabaseReachable(deps.db), isTemporalReachable(deps)]);
    const ready = database && temporal;
    return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', checks: { database, temporal } } };
  },
});

async function isTemporalReachable({ temporal }: { temporal: import('@temporalio/client').Client }): Promise<boolean> {
  try {
    await temporal.connection.withDeadline(Date.now() + 2000, () =>
      temporal.workflowService.describeNamespace({ namespace: temporal.options.namespace }),
    );
    return true;
  } catch {
    return false;
  }
}

export default [healthz, readyz];
