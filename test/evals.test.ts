import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { addCases, createSuite, finishedExperiment, pollExperiment, startExperiment } from './support/evals.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

/** An agent answering with the echo model: its output names the input, so each case's output differs. */
const ECHO_GRAPH = { nodes: [{ id: 'main', model: 'ollama/echo', toolRefs: [] }] };

describe('evals: experiments', function () {
  this.timeout(120_000);
  let key: string;
  before(async () => {
    ({ key } = await newTenant('evals'));
  });

  it('runs a suite of three cases against two variants, and ranks them on a leaderboard computed from the cells', async () => {
    const agentId = await publishAgent(key, 'capitals', ECHO_GRAPH);
    const suite = await createSuite(key, agentId, 'capitals', [{ type: 'contains' }]);
    const cases = await addCases(key, suite.id, [
      { input: 'Paris', expected: 'Paris' },
      { input: 'Berlin', expected: 'Berlin' },
      { input: 'Rome', expected: 'Rome' },
    ]);
    const experiment = await startExperiment(key, {
      suite: 'capitals',
      name: 'echo vs always-paris',
      variants: [{ name: 'paris' , graph: scriptedGraph([{ text: 'It is Paris.' }]) }, { name: 'echo' }],
    });
    expect(experiment).to.include({ status: 'queued', case_count: 3, cell_count: 6, repeats: 1, concurrency: 4, primary_scorer: 'contains' });
    expect(experiment.variants.map((v: any) => v.agent_version)).to.deep.equal([1, 1]);

    const done = await finishedExperiment(key, experiment.id);
    expect(done.experiment.status).to.equal('completed');
    expect(done.experiment.cells).to.include({ completed: 6, failed: 0, pending: 0, skipped: 0, total: 6 });
    const [first, second] = done.leaderboard;
    expect(first).to.include({ rank: 1, variant: 'echo', primary_score: 1, pass_rate: 1 });
    expect(second).to.include({ rank: 2, variant: 'paris' });
    expect(second.primary_score).to.be.closeTo(1 / 3, 1e-9);
    expect(second.scores.contains).to.include({ n: 3 });
    expect(second.scores.contains.ci95).to.equal(null); // no repeats, no interval
    expect(first.latency_ms.p50).to.be.a('number');
    // Exact decimal costs: a local (ollama) model costs nothing; the scripted model has prices.
    expect(first.cost_usd).to.deep.equal({ total: '0', mean: '0' });
    const runCosts = done.results.map((row: any) => row.cells.find((cell: any) => cell.variant === 'paris').cost_usd);
    expect(second.cost_usd.total).to.equal(runCosts.reduce((sum: number, cost: string) => sum + Number(cost), 0).toString());
    expect(done.experiment.cost_usd).to.equal(second.cost_usd.total);

    // The matrix: a row per case in suite order, each with a cell per variant.
    expect(done.results.map((row: any) => row.case_id)).to.deep.equal(cases.map((c) => c.id));
    const paris = done.results[1].cells.find((cell: any) => cell.variant === 'paris');
    expect(paris).to.include({ status: 'completed', passed: false, output: 'It is Paris.' });
    expect(paris.scores.contains.score).to.equal(0);

    // Each cell's run is a real run: readable, marked as an eval's, left out of GET /v1/runs unless asked for.
    const run = (await call('GET', `/v1/runs/${paris.run_id}`, { key })).body.run;
    expect(run).to.include({ source: 'eval', status: 'completed', output: 'It is Paris.' });
    const listed = (await call('GET', `/v1/runs?agent=${agentId}`, { key })).body.runs;
    expect(listed).to.have.length(0);
    const evalRuns = (await call('GET', `/v1/runs?agent=${agentId}&source=eval`, { key })).body.runs;
    expect(evalRuns).to.have.length(6);

    // Operators find them in Temporal by source and experiment.
    const client = testPlatform().temporal;
    const query = `RunSource = "eval" AND ExperimentId = "${experiment.id}"`;
    let found = 0;
    for (let attempt = 0; attempt < 50 && found < 6; attempt++) {
      found = 0;
      for await (const _ of client.workflow.list({ query })) found += 1;
      if (found < 6) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).to.equal(6);
  });
});
