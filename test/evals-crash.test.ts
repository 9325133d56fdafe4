import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { addCases, createSuite, finishedExperiment, pollExperiment, startExperiment } from './support/evals.js';
import { testWorkerPool } from './support/global.js';
import { stream } from './support/sse.js';

/**
 * The worker process killed with SIGKILL in the middle of an experiment, then a new one started: the
 * experiment completes with every cell run and scored exactly once. Like the run crash tests, this needs
 * the worker in a process of its own, hence Postgres (`npm test` with DATABASE_URL, as CI runs it).
 */
describe('evals: worker crashes', function () {
  this.timeout(180_000);

  before(function () {
    if (!testWorkerPool().separateProcess) {
      console.log('      (skipped on embedded PGlite: killing a worker needs it in its own process, which needs DATABASE_URL)');
      this.skip();
    }
  });

  it('completes an experiment whose worker was killed mid-way, every cell run and scored once', async () => {
    const { key } = await newTenant('evals-crash');
    const agentId = await publishAgent(key, 'steady', scriptedGraph([{ text: 'steady answer', delay_ms: 1200 }]));
    const suite = await createSuite(key, agentId, 'steady', [{ type: 'exact' }]);
    await addCases(key, suite.id, Array.from({ length: 12 }, (_, i) => ({ input: `q${i}`, expected: 'steady answer' })));
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 3 });

    await pollExperiment(key, experiment.id, (body) => body.leaderboard[0].cells.completed >= 2 && body.leaderboard[0].cells.running >= 1);
    await testWorkerPool().stop(); // SIGKILL
    await testWorkerPool().start();

    const done = await finishedExperiment(key, experiment.id, 150_000);
    expect(done.experiment.status).to.equal('completed');
    expect(done.experiment.cells).to.include({ completed: 12, failed: 0, skipped: 0 });
    const cells = done.results.flatMap((row: any) => row.cells);
    expect(cells.every((cell: any) => cell.passed === true && cell.output === 'steady answer')).to.equal(true);
    const runIds = cells.map((cell: any) => cell.run_id);
    expect(new Set(runIds).size).to.equal(12);
    const runs = (await call('GET', `/v1/runs?agent=${agentId}&source=eval&limit=100`, { key })).body.runs;
    expect(runs.map((run: any) => run.id)).to.have.members(runIds);
    expect(runs.every((run: any) => run.status === 'completed')).to.equal(true);

    const events = await stream('GET', `/v1/evals/experiments/${experiment.id}/events`, { key });
    const ended = events.frames.filter((frame) => frame.event === 'cell.completed').map((frame) => frame.data.cell_id);
    expect(ended).to.have.length(12);
    expect(new Set(ended).size).to.equal(12);
    expect(events.frames.filter((frame) => frame.event === 'experiment.completed')).to.have.length(1);
  });
});
