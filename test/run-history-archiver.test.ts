import { WorkflowNotFoundError } from '@temporalio/client';
import { expect } from 'chai';
import { sql } from 'kysely';
import { archiveRunHistoryWorkflowId } from '../workflows/archive-run-history-api.js';
import { PING_WORKFLOW_TYPE } from '../workflows/ping-api.js';
import type { ping } from '../workflows/ping.js';
import { RUN_HISTORY_ARCHIVER_WORKFLOW_ID } from '../workflows/run-history-archiver-api.js';
import { TASK_QUEUES } from '../workflows/task-queues.js';
import { newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform, testWorkerPool } from './support/global.js';
import { stream } from './support/sse.js';

/** Polls until `check` answers true (every 100 ms, for up to `timeoutMs`). */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: still not so after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('run history archiver', function () {
  this.timeout(120_000);
  let key: string;
  let agentId: string;
  before(async () => {
    ({ key } = await newTenant('archiver'));
    agentId = await publishAgent(key, 'archived', scriptedGraph([{ text: 'done' }]));
  });

  async function finishedRun(): Promise<string> {
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'go' } });
    expect(response.frames.at(-1)!.event).to.equal('run.completed');
    return response.frames[0]!.data.run_id;
  }

  const queued = async (runId: string) => (await testPlatform().db.selectFrom('run_history_queue').select('run_id').where('run_id', '=', runId).executeTakeFirst()) !== undefined;
  const stored = async (runId: string) => testPlatform().db.selectFrom('run_histories').select(['event_count', 'history']).where('run_id', '=', runId).executeTakeFirst();

  /** Queues a copy of a run's row under another id: a run whose workflow Temporal does not know. */
  async function copyRun(runId: string, newId: string, { queue = true } = {}): Promise<void> {
    await testPlatform()
      .db.transaction()
      .execute(async (tx) => {
        await sql`create temp table copied_run on commit drop as select * from runs where id = ${runId}`.execute(tx);
        await sql`update copied_run set id = ${newId}`.execute(tx);
        await sql`insert into runs select * from copied_run`.execute(tx);
        if (queue) await sql`insert into run_history_queue (run_id, tenant_id) select id, tenant_id from copied_run`.execute(tx);
      });
  }

  it('stores a finished run’s whole history from the queue its end filled, without a child workflow per run', async () => {
    const runId = await finishedRun();
    await eventually('the history is stored', async () => (await stored(runId)) !== undefined);
    const history = (await stored(runId))!;
    const events = (history.history as { events: Array<{ eventType?: string }> }).events;
    expect(events.length).to.equal(history.event_count);
    expect(events.at(-1)!.eventType, 'stored once the workflow had closed').to.match(/WORKFLOW_EXECUTION_COMPLETED|WorkflowExecutionCompleted/);
    expect(await queued(runId), 'off the queue with its history saved').to.equal(false);

    const { temporal } = testPlatform();
    const child = await temporal.workflow
      .getHandle(archiveRunHistoryWorkflowId(runId))
      .describe()
      .then(
        () => 'exists',
        (err) => (err instanceof WorkflowNotFoundError ? 'none' : err),
      );
    expect(child, 'no archiving child workflow').to.equal('none');
    expect((await temporal.workflow.getHandle(RUN_HISTORY_ARCHIVER_WORKFLOW_ID).describe()).status.name).to.equal('RUNNING');
  });

  it('takes a queued run whose workflow Temporal no longer has off the queue, storing nothing', async () => {
    const original = await finishedRun();
    await eventually('the original is archived', async () => !(await queued(original)));
    // A run row that never had a workflow, as one would look after Temporal's retention dropped it.
    const orphan = `run_orphan_${Date.now()}`;
    await copyRun(original, orphan);
    await eventually('the orphan leaves the queue', async () => !(await queued(orphan)));
    expect(await stored(orphan)).to.equal(undefined);
  });

  it('backs off a run whose copy fails, without holding up the runs queued after it', async () => {
    const { db } = testPlatform();
    const original = await finishedRun();
    await eventually('the original is archived', async () => !(await queued(original)));
    // Sorted before every real run id, with a closed workflow, queued under another workspace than the one
    // whose copy of its history is stored already: row-level security refuses that workspace's overwrite,
    // every time. (A corrupt row; what matters is a copy that keeps failing.)
    const bad = `run_0000${Date.now()}`;
    await testPlatform().temporal.workflow.execute<typeof ping>(PING_WORKFLOW_TYPE, { taskQueue: TASK_QUEUES.runs, workflowId: bad, args: ['closed'] });
    await copyRun(original, bad, { queue: false });
    const owner = (await db.selectFrom('runs').select('tenant_id').where('id', '=', bad).executeTakeFirstOrThrow()).tenant_id;
    await db.insertInto('run_histories').values({ run_id: bad, tenant_id: owner, history: '{}', event_count: 0 }).execute();
    await db.insertInto('run_history_queue').values({ run_id: bad, tenant_id: (await newTenant('archiver-other')).tenantId }).execute();
    try {
      const good = await finishedRun();
      await eventually('the run queued after the failing one is archived', async () => (await stored(good)) !== undefined);
      // Copies of one page go a few at a time, so the good run can be stored before the failure beside it is noted.
      const failure = () => db.selectFrom('run_history_queue').select(['attempts', 'last_error', 'next_attempt_at']).where('run_id', '=', bad).executeTakeFirstOrThrow();
      await eventually('the failing copy noted', async () => (await failure()).attempts >= 1);
      const row = await failure();
      expect(row.last_error).to.be.a('string').and.not.empty;
      expect(row.next_attempt_at.getTime(), 'tried again later, not at once').to.be.above(Date.now() - 1_000);
    } finally {
      await db.deleteFrom('runs').where('id', '=', bad).execute();
    }
  });

  it('starts the archiver again when it has ended, and archives what waited meanwhile', async () => {
    const archiver = testPlatform().temporal.workflow.getHandle(RUN_HISTORY_ARCHIVER_WORKFLOW_ID);
    await testWorkerPool().stop();
    await testWorkerPool().start({ RUN_HISTORY_ARCHIVER_CHECK_MS: '500' });
    try {
      const ended = (await archiver.describe()).runId;
      await archiver.terminate('ended from outside, as an operator in the Web UI might');
      const runId = await finishedRun();
      await eventually('archived', async () => (await stored(runId)) !== undefined, 20_000);
      expect(await queued(runId)).to.equal(false);
      // A new execution, started by a worker's check. (The run may have been archived by the ended
      // execution's activity, which learns of the termination at its next heartbeat, or by the new one.)
      await eventually(
        'the archiver running again',
        async () => {
          const { status, runId: current } = await archiver.describe();
          return status.name === 'RUNNING' && current !== ended;
        },
        20_000,
      );
    } finally {
      await testWorkerPool().stop();
      await testWorkerPool().start();
    }
  });

  it('keeps what is queued while no worker runs, and archives it once one starts', async () => {
    const { db } = testPlatform();
    const runId = await finishedRun();
    await eventually('archived', async () => !(await queued(runId)));
    const tenantId = (await db.selectFrom('runs').select('tenant_id').where('id', '=', runId).executeTakeFirstOrThrow()).tenant_id;
    await testWorkerPool().stop();
    try {
      // As if the run had ended just before the workers went away: its history not yet copied.
      await db.deleteFrom('run_histories').where('run_id', '=', runId).execute();
      await db.insertInto('run_history_queue').values({ run_id: runId, tenant_id: tenantId }).execute();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await stored(runId), 'nothing archives without a worker').to.equal(undefined);
    } finally {
      await testWorkerPool().start();
    }
    await eventually('archived after the restart', async () => (await stored(runId)) !== undefined);
    expect(await queued(runId)).to.equal(false);
  });
});
