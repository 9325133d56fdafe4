import { expect } from 'chai';
import { insertCells } from '../db/experiment-cells.js';
import { insertExperiment, markExperimentRunning } from '../db/experiments.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
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

    // Later reads of a finished experiment reuse its final cells; its row (a new name) is still read fresh.
    await call('PATCH', `/v1/evals/experiments/${experiment.id}`, { key, body: { name: 'renamed after the end' } });
    const again = (await call('GET', `/v1/evals/experiments/${experiment.id}?results=true`, { key })).body;
    expect(again.experiment).to.deep.equal({ ...done.experiment, name: 'renamed after the end', updated_at: again.experiment.updated_at });
    expect(again.leaderboard).to.deep.equal(done.leaderboard);
    expect(again.results).to.deep.equal(done.results);

    // Each cell's run is a real run: readable, marked as an eval's, left out of GET /v1/runs unless asked for.
    const run = (await call('GET', `/v1/runs/${paris.run_id}`, { key })).body.run;
    expect(run).to.include({ source: 'eval', status: 'completed', output: 'It is Paris.', experiment_id: experiment.id, cell_id: paris.cell_id });
    const listed = (await call('GET', `/v1/runs?agent=${agentId}`, { key })).body.runs;
    expect(listed).to.have.length(0);
    const evalRuns = (await call('GET', `/v1/runs?agent=${agentId}&source=eval`, { key })).body.runs;
    expect(evalRuns).to.have.length(6);
    // Their threads are the eval's, not conversations: the agent's thread list leaves them out.
    expect((await call('GET', `/v1/threads?agent=${agentId}`, { key })).body.threads).to.deep.equal([]);

    // Six eval runs spent none of the key's run budget: the first API run sees all but itself left.
    const apiRun = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'Oslo' } });
    expect(apiRun.headers.get('ratelimit-remaining')).to.equal('59');

    // Operators find them in Temporal by source and experiment.
    const client = testPlatform().temporal;
    const query = `RunSource = "eval" AND ExperimentId = "${experiment.id}"`;
    let found = 0;
    for (let attempt = 0; attempt < 50 && found < 6; attempt++) {
      found = 0;
      for await (const workflow of client.workflow.list({ query })) found += workflow.type === 'agentRun' ? 1 : 0;
      if (found < 6) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).to.equal(6);
  });

  it('refuses bad experiments with a 400 naming the field, and starts nothing', async () => {
    const agentId = await publishAgent(key, 'strict', scriptedGraph([{ text: 'x' }]));
    const suite = await createSuite(key, agentId, 'strict', [{ type: 'exact' }]);
    const empty = await createSuite(key, agentId, 'empty', [{ type: 'exact' }]);
    await addCases(key, suite.id, [{ input: 'q', expected: 'x' }]);
    await call('POST', '/v1/prompts', { key, body: { name: 'tone', template: 'Be brief.' } });
    const skill = await call('POST', '/v1/skills', { key, body: { name: 'any-skill', description: 'A skill', instructions: 'Be kind.' } });
    expect(skill.status, JSON.stringify(skill.body)).to.equal(201);

    // Every cell copies its case: 20 variants × 100 repeats of a 105,000-character case is past the 200M characters an experiment may copy.
    const big = await createSuite(key, agentId, 'big', [{ type: 'exact' }]);
    await addCases(key, big.id, [{ input: 'q'.repeat(100_000), expected: 'x', metadata: { note: 'n'.repeat(5_000) } }]);
    const manyVariants = Array.from({ length: 20 }, (_, i) => ({ name: `v${i}` }));

    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ suite: big.id, variants: manyVariants, repeats: 100 }, 'body.repeats'],
      [{ suite: empty.id, variants: [{ name: 'v' }] }, 'body.suite'],
      [{ suite: suite.id, variants: [{ name: 'v', model: 'nonsense/model' }] }, 'body.variants[0].model'],
      [{ suite: suite.id, variants: [{ name: 'v', model: 'openai' }] }, 'body.variants[0].model'],
      [{ suite: suite.id, variants: [{ name: 'v', prompt: { name: 'tone', version: 7 } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v', prompt: { name: 'no-such-prompt' } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v', agent_version: 9 }] }, 'body.variants[0].agent_version'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', toolRefs: ['missing-tool'], model: 'scripted' }] } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v' }, { name: 'v' }] }, 'body.variants[1].name'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', model: 'bogus/x' }] } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', model: 'scripted' }], guardrails: ['no-such-guardrail'] } }] }, 'body.variants[0]'],
      // Versions past Postgres' integer, and graphs past the bounds (each once a 500).
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', model: 'scripted', prompt: { name: 'tone', version: 2 ** 31 } }] } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', model: 'scripted', skills: [{ name: 'any-skill', version: 2 ** 31 }] }] } }] }, 'body.variants[0]'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: [{ id: 'n', model: 'scripted', toolRefs: Array.from({ length: 129 }, (_, i) => `t${i}`) }] } }] }, 'body.variants.0.graph.nodes.0.toolRefs'],
      [{ suite: suite.id, variants: [{ name: 'v', graph: { nodes: Array.from({ length: 257 }, (_, i) => ({ id: `n${i}`, model: 'scripted' })) } }] }, 'body.variants.0.graph.nodes'],
      [{ suite: suite.id, variants: [{ name: 'v' }], primary_scorer: 'judge' }, 'body.primary_scorer'],
      [{ suite: suite.id, variants: [{ name: 'v' }], baseline_experiment_id: 'exp_nothing' }, 'body.baseline_experiment_id'],
      [{ suite: suite.id, variants: [] }, 'body.variants'],
      [{ suite: suite.id, variants: [{ name: 'v' }], concurrency: 33 }, 'body.concurrency'],
      [{ suite: suite.id, variants: [{ name: 'v' }], repeats: 20_001 }, 'body.repeats'],
    ];
    for (const [body, field] of refusals) {
      const response = await call('POST', '/v1/evals/experiments', { key, body });
      expect(response.status, JSON.stringify(body)).to.equal(400);
      expect(response.body.error.fields.map((f: any) => f.field), JSON.stringify(response.body)).to.include(field);
    }
    expect((await call('POST', '/v1/evals/experiments', { key, body: { suite: 'nothing', variants: [{ name: 'v' }] } })).status).to.equal(404);
    expect((await call('GET', `/v1/evals/experiments?agent=${agentId}`, { key })).body.experiments).to.deep.equal([]);
    expect((await call('GET', `/v1/runs?agent=${agentId}&source=all`, { key })).body.runs).to.deep.equal([]);
  });

  it("holds a workspace's unfinished experiments to 64 cells at once, their concurrency summed (429), in creation and in a raised concurrency", async () => {
    const own = await newTenant('evals-budget');
    const agentId = await publishAgent(own.key, 'budgeted', scriptedGraph([{ text: 'x' }]));
    const suite = await createSuite(own.key, agentId, 'budgeted', [{ type: 'exact' }]);
    await addCases(own.key, suite.id, [{ input: 'q', expected: 'x' }]);
    // Two experiments recorded as running, without workflows: they hold 32 + 30 cells of the budget.
    const recorded = async (concurrency: number) =>
      withTenant(testPlatform().db, own.tenantId, async (tx) => {
        const experiment = await insertExperiment(tx, own.tenantId, {
          ...{ agentId, suiteId: suite.id, suiteName: suite.name, name: `recorded ${concurrency}`, description: null, variants: [] },
          ...{ repeats: 1, concurrency, primaryScorer: null, baselineExperimentId: null, caseCount: 0, cellCount: 0 },
        });
        await markExperimentRunning(tx, own.tenantId, experiment.id);
        return experiment.id;
      });
    const first = await recorded(32);
    const second = await recorded(30);
    const experimentCount = async () => (await call('GET', '/v1/evals/experiments', { key: own.key })).body.experiments.length;

    const over = await call('POST', '/v1/evals/experiments', { key: own.key, body: { suite: suite.id, variants: [{ name: 'v' }], concurrency: 3 } });
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('rate_limited');
    expect(over.body.error.message).to.include('at most 2');
    expect(over.headers.get('retry-after')).to.equal('30');
    expect(await experimentCount()).to.equal(2);

    // Raising one's concurrency is held to the same budget; lowering always goes.
    expect((await call('PATCH', `/v1/evals/experiments/${second}`, { key: own.key, body: { concurrency: 32 } })).status).to.equal(200);
    // The budget is full (32 + 32); a change that raises nothing still goes.
    expect((await call('PATCH', `/v1/evals/experiments/${first}`, { key: own.key, body: { concurrency: 32, name: 'renamed' } })).status).to.equal(200);
    expect((await call('POST', '/v1/evals/experiments', { key: own.key, body: { suite: suite.id, variants: [{ name: 'v' }], concurrency: 1 } })).status).to.equal(429);
    expect((await call('PATCH', `/v1/evals/experiments/${second}`, { key: own.key, body: { concurrency: 10 } })).status).to.equal(200);
    const third = await recorded(1);
    const refusedRaise = await call('PATCH', `/v1/evals/experiments/${third}`, { key: own.key, body: { concurrency: 23 } }); // 32 + 10 others: 22 would fit
    expect(refusedRaise.status).to.equal(429);
    expect((await call('GET', `/v1/evals/experiments/${third}`, { key: own.key })).body.experiment.concurrency).to.equal(1);

    // 32 + 10 + 1 leave 21; an ended experiment's cells leave the budget.
    const fits = await startExperiment(own.key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 21 });
    await finishedExperiment(own.key, fits.id);
    for (const id of [first, second, third]) expect((await call('DELETE', `/v1/evals/experiments/${id}`, { key: own.key })).status).to.equal(202);
    await startExperiment(own.key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 32 });
  });

  it("counts a lowered experiment's cells still running against the budget, and judges concurrent creates one after the other", async () => {
    const own = await newTenant('evals-budget-race');
    const agentId = await publishAgent(own.key, 'raced', scriptedGraph([{ text: 'x' }]));
    const suites = await Promise.all(Array.from({ length: 5 }, (_, i) => createSuite(own.key, agentId, `raced-${i}`, [{ type: 'exact' }])));
    for (const suite of suites) await addCases(own.key, suite.id, [{ input: 'q', expected: 'x' }]);

    // Five creates of 20 at once, on five suites (so no suite's lock orders them): three fit in 64.
    const creates = await Promise.all(
      suites.map((suite) => call('POST', '/v1/evals/experiments', { key: own.key, body: { suite: suite.id, variants: [{ name: 'v' }], concurrency: 20 } })),
    );
    const statuses = creates.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 201).length, statuses.join(', ')).to.be.at.most(3);
    expect(statuses.every((status) => status === 201 || status === 429), statuses.join(', ')).to.equal(true);
    for (const created of creates.filter((response) => response.status === 201)) await finishedExperiment(own.key, created.body.experiment.id);

    // An experiment with 40 cells running, then lowered to 1: the 40 still run, and still count.
    const { db } = testPlatform();
    const caseId = (await call('GET', `/v1/evals/suites/${suites[0]!.id}/cases`, { key: own.key })).body.cases[0].id;
    const busy = await withTenant(db, own.tenantId, async (tx) => {
      const experiment = await insertExperiment(tx, own.tenantId, {
        ...{ agentId, suiteId: suites[0]!.id, suiteName: suites[0]!.name, name: 'busy', description: null, variants: [] },
        ...{ repeats: 40, concurrency: 32, primaryScorer: null, baselineExperimentId: null, caseCount: 1, cellCount: 40 },
      });
      await markExperimentRunning(tx, own.tenantId, experiment.id);
      const cell = { caseId, caseIndex: 0, variantIndex: 0, input: 'q', expected: 'x', metadata: {}, scorers: [] };
      await insertCells(tx, own.tenantId, experiment.id, Array.from({ length: 40 }, (_, repeat) => ({ ...cell, repeat })));
      await tx.updateTable('experiment_cells').set({ status: 'running' }).where('experiment_id', '=', experiment.id).execute();
      return experiment.id;
    });
    expect((await call('PATCH', `/v1/evals/experiments/${busy}`, { key: own.key, body: { concurrency: 1 } })).status).to.equal(200);
    const refused = await call('POST', '/v1/evals/experiments', { key: own.key, body: { suite: suites[1]!.id, variants: [{ name: 'v' }], concurrency: 25 } });
    expect(refused.status).to.equal(429);
    expect(refused.body.error.message).to.include('the others take 40');
    await finishedExperiment(own.key, (await startExperiment(own.key, { suite: suites[1]!.id, variants: [{ name: 'v' }], concurrency: 24 })).id);
    expect((await call('DELETE', `/v1/evals/experiments/${busy}`, { key: own.key })).status).to.equal(202);
  });

  it('shows a partial leaderboard while running, follows a new concurrency, and streams its progress resumably', async () => {
    const agentId = await publishAgent(key, 'slow', scriptedGraph([{ text: 'done', delay_ms: 400 }]));
    const suite = await createSuite(key, agentId, 'slow', [{ type: 'exact' }]);
    await addCases(key, suite.id, Array.from({ length: 8 }, (_, i) => ({ input: `q${i}`, expected: 'done' })));
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 1 });

    const partial = await pollExperiment(key, experiment.id, (body) => body.leaderboard[0].cells.completed >= 1);
    expect(partial.experiment.status).to.equal('running');
    expect(partial.leaderboard[0].cells.pending).to.be.greaterThan(0);
    expect(partial.leaderboard[0].pass_rate).to.equal(1);
    // At concurrency 1 a single cell runs at a time.
    expect(partial.leaderboard[0].cells.running).to.be.at.most(1);

    const patched = await call('PATCH', `/v1/evals/experiments/${experiment.id}`, { key, body: { concurrency: 4, name: 'faster', description: 'now' } });
    expect(patched.body.experiment).to.include({ concurrency: 4, name: 'faster', description: 'now' });
    const wider = await pollExperiment(key, experiment.id, (body) => body.leaderboard[0].cells.running >= 2 || body.experiment.status === 'completed');
    expect(wider.experiment.status, 'several cells ran at once after the PATCH').to.equal('running');

    const first = await stream('GET', `/v1/evals/experiments/${experiment.id}/events`, { key, until: (frame) => frame.event === 'cell.completed' });
    expect(first.frames[0]).to.include({ event: 'experiment.started', id: 1 });
    const rest = await stream('GET', `/v1/evals/experiments/${experiment.id}/events`, { key, headers: { 'last-event-id': String(first.frames.at(-1)!.id) } });
    const frames = [...first.frames, ...rest.frames];
    expect(frames.map((f) => f.id)).to.deep.equal(frames.map((_, i) => i + 1));
    expect(frames.at(-1)!.event).to.equal('experiment.completed');
    expect(frames.filter((f) => f.event === 'cell.completed')).to.have.length(8);
    expect(frames.filter((f) => f.event === 'cell.started')).to.have.length(8);
    const cellDone = frames.find((f) => f.event === 'cell.completed')!.data;
    expect(cellDone).to.include({ status: 'completed', passed: true });
    expect(cellDone.scores).to.deep.equal({ exact: 1 });
    expect(frames.at(-1)!.data.cells).to.include({ completed: 8 });
    // Reconnecting after the last event (as EventSource does by itself) gets an empty stream that ends.
    const after = await stream('GET', `/v1/evals/experiments/${experiment.id}/events`, { key, headers: { 'last-event-id': String(frames.at(-1)!.id) } });
    expect(after.status).to.equal(200);
    expect(after.frames).to.deep.equal([]);

    // Finished: its concurrency is settled, and DELETE now deletes it.
    expect((await call('PATCH', `/v1/evals/experiments/${experiment.id}`, { key, body: { concurrency: 2 } })).status).to.equal(409);
    const deleted = await call('DELETE', `/v1/evals/experiments/${experiment.id}`, { key });
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ deleted: true, id: experiment.id });
    expect((await call('GET', `/v1/evals/experiments/${experiment.id}`, { key })).status).to.equal(404);
    expect((await call('GET', `/v1/evals/experiments/${experiment.id}/events`, { key })).status).to.equal(404);
  });

  it('cancels with DELETE: pending cells are skipped, cells already running finish and count', async () => {
    const agentId = await publishAgent(key, 'cancel-me', scriptedGraph([{ text: 'ok', delay_ms: 1500 }]));
    const suite = await createSuite(key, agentId, 'cancel-me', [{ type: 'exact' }]);
    await addCases(key, suite.id, Array.from({ length: 10 }, (_, i) => ({ input: `q${i}`, expected: 'ok' })));
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 2 });
    await pollExperiment(key, experiment.id, (body) => body.leaderboard[0].cells.running === 2);

    const cancelling = await call('DELETE', `/v1/evals/experiments/${experiment.id}`, { key });
    expect(cancelling.status).to.equal(202);
    expect(cancelling.body.experiment.id).to.equal(experiment.id);
    const done = await finishedExperiment(key, experiment.id);
    expect(done.experiment.status).to.equal('cancelled');
    const cells = done.results.flatMap((row: any) => row.cells);
    const started = cells.filter((cell: any) => cell.run_id !== null);
    expect(started.length).to.be.within(2, 9);
    for (const cell of started) expect(cell, 'a started cell finished').to.include({ status: 'completed', passed: true, output: 'ok' });
    expect(cells.filter((cell: any) => cell.status === 'skipped')).to.have.length(10 - started.length);
    expect(done.experiment.cells).to.include({ pending: 0, running: 0, completed: started.length, skipped: 10 - started.length });
    expect(done.leaderboard[0]).to.include({ pass_rate: 1 });
    // Every started cell's run completed; no run was left running.
    const runs = (await call('GET', `/v1/runs?agent=${agentId}&source=eval`, { key })).body.runs;
    expect(runs.map((run: any) => run.status)).to.deep.equal(started.map(() => 'completed'));
    // Cancelling again changes nothing: it is finished, so DELETE removes it.
    expect((await call('DELETE', `/v1/evals/experiments/${experiment.id}`, { key })).status).to.equal(200);
  });

  it('scores with an LLM judge on the scripted model (its cost counts), semantic similarity on the real embedder, and tool_called', async () => {
    const calculator = await createTool(key, { name: 'calc', kind: 'builtin', builtin: 'calculator' });
    const graph = scriptedGraph(
      [{ tool_calls: [{ tool: 'calc', arguments: { expression: '6*7' } }] }, { text: 'The answer to six times seven is forty-two.' }],
      [calculator],
    );
    const agentId = await publishAgent(key, 'judged', graph);
    const judge = { type: 'llm_judge', name: 'judge', model: 'scripted', rubric: 'Q: {{input}}\nA: {{output}}\nExpected: {{expected}}', script: [{ text: '{"score": 0.9, "reason": "right"}' }] };
    const suite = await createSuite(key, agentId, 'judged', [judge, { type: 'semantic_similarity', threshold: 0.5 }, { type: 'tool_called', tools: ['calc'] }]);
    await addCases(key, suite.id, [
      { input: 'What is 6 times 7?', expected: 'Six times seven equals forty-two.' },
      { input: 'Name a fruit', expected: 'The stock market fell sharply on Tuesday.' },
    ]);
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }] });
    const done = await finishedExperiment(key, experiment.id);
    expect(done.experiment.status).to.equal('completed');
    expect(done.experiment.primary_scorer).to.equal('judge');
    const [close, far] = done.results.map((row: any) => row.cells[0]);
    expect(close.scores.judge).to.include({ score: 0.9, passed: true });
    expect(close.scores.tool_called).to.include({ score: 1, passed: true });
    expect(close.scores.semantic_similarity.score).to.be.greaterThan(0.5);
    expect(far.scores.semantic_similarity.score).to.be.lessThan(close.scores.semantic_similarity.score);
    expect(close.passed).to.equal(true);
    expect(far.passed).to.equal(false);
    expect(done.leaderboard[0].pass_rate).to.equal(0.5);
    expect(done.leaderboard[0].scores.judge).to.include({ mean: 0.9, n: 2 });

    // The judge's cost is the cell's cost beyond its run's.
    const run = (await call('GET', `/v1/runs/${close.run_id}`, { key })).body.run;
    expect(Number(close.cost_usd)).to.be.greaterThan(Number(run.usage.cost_usd));
    expect(done.experiment.cost_usd).to.equal(String(Number(close.cost_usd) + Number(far.cost_usd)));
  });

  it('fails a cell, not the experiment, when its run fails or a scorer breaks; an unknown cost is null, not zero', async () => {
    const agentId = await publishAgent(key, 'fragile', scriptedGraph([{ text: 'fine', usage: null }]));
    const suite = await createSuite(key, agentId, 'fragile', [{ type: 'exact' }]);
    await addCases(key, suite.id, [
      { input: 'plain', expected: 'fine' },
      { input: 'judged', expected: 'fine', scorers: [{ type: 'llm_judge', model: 'scripted', rubric: '{{output}}', script: [{ text: 'no idea' }] }] },
    ]);
    const experiment = await startExperiment(key, {
      suite: suite.id,
      variants: [{ name: 'unpriced' }, { name: 'broken', graph: scriptedGraph([]) }],
    });
    const done = await finishedExperiment(key, experiment.id);
    expect(done.experiment.status).to.equal('completed');
    const [plain, judged] = done.results;
    const cell = (row: any, variant: string) => row.cells.find((c: any) => c.variant === variant);
    expect(cell(plain, 'unpriced')).to.include({ status: 'completed', passed: true, cost_usd: null });
    expect(cell(judged, 'unpriced')).to.include({ status: 'failed', passed: false });
    expect(cell(judged, 'unpriced').error.code).to.equal('scorer_error');
    expect(cell(plain, 'broken')).to.include({ status: 'failed', passed: false });
    expect(cell(plain, 'broken').error.code).to.equal('model_error');
    const unpriced = done.leaderboard.find((row: any) => row.variant === 'unpriced');
    expect(unpriced).to.include({ pass_rate: 0.5 });
    expect(unpriced.cost_usd).to.deep.equal({ total: null, mean: null });
    expect(done.leaderboard.find((row: any) => row.variant === 'broken').cells).to.include({ failed: 2 });
    expect(done.experiment.cost_usd).to.equal(null);
  });

  it('compares each variant with a baseline case by case, and gives 95% intervals with repeats', async () => {
    const agentId = await publishAgent(key, 'compared', ECHO_GRAPH);
    const suite = await createSuite(key, agentId, 'compared', [{ type: 'contains' }]);
    const cases = await addCases(key, suite.id, [
      { input: 'alpha', expected: 'alpha' },
      { input: 'beta', expected: 'beta' },
      { input: 'gamma', expected: 'It is alpha' },
    ]);
    const baseline = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v', graph: scriptedGraph([{ text: 'It is alpha' }]) }] });
    await finishedExperiment(key, baseline.id);
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }], baseline_experiment_id: baseline.id, repeats: 3 });
    const done = await finishedExperiment(key, experiment.id);
    const [row] = done.leaderboard;
    // echo answers `saw user; last: "<input>"`: alpha and beta pass, gamma fails; the baseline passed alpha and gamma.
    expect(row.baseline).to.deep.equal({ experiment_id: baseline.id, baseline_variant: 'v', regressed: [cases[2]!.id], improved: [cases[1]!.id], unchanged: 1 });
    expect(row.scores.contains.n).to.equal(9);
    const [low, high] = row.scores.contains.ci95;
    expect(low).to.be.lessThan(row.scores.contains.mean);
    expect(high).to.be.greaterThan(row.scores.contains.mean);
    expect(done.results[0].cells.map((c: any) => c.repeat)).to.deep.equal([0, 1, 2]);
  });

  it('continues as new every EXPERIMENT_CELLS_PER_WORKFLOW_RUN cells, and still runs and scores every cell exactly once', async () => {
    const agentId = await publishAgent(key, 'long', scriptedGraph([{ text: 'yes' }]));
    const suite = await createSuite(key, agentId, 'long', [{ type: 'exact' }]);
    await addCases(key, suite.id, Array.from({ length: 25 }, (_, i) => ({ input: `q${i}`, expected: 'yes' })));
    process.env.EXPERIMENT_CELLS_PER_WORKFLOW_RUN = '10';
    let experiment;
    try {
      experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }], concurrency: 4 });
    } finally {
      delete process.env.EXPERIMENT_CELLS_PER_WORKFLOW_RUN;
    }
    const done = await finishedExperiment(key, experiment.id);
    expect(done.experiment.cells).to.include({ completed: 25, failed: 0 });
    const runIds = done.results.map((row: any) => row.cells[0].run_id);
    expect(new Set(runIds).size).to.equal(25);
    expect((await call('GET', `/v1/runs?agent=${agentId}&source=eval&limit=100`, { key })).body.runs).to.have.length(25);

    // Three runs of the workflow: the chain of continue-as-new.
    const client = testPlatform().temporal;
    let chain = 0;
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${experiment.id}"` })) chain += execution.status.name === 'CONTINUED_AS_NEW' ? 1 : 0;
    expect(chain).to.equal(2);
  });

  it('never waits for a human in an eval run: ask_human fails as a step and the run goes on', async () => {
    const askTool = await createTool(key, { name: 'ask_human', kind: 'builtin', builtin: 'ask_human' });
    const graph = scriptedGraph([{ tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] }, { text: 'Blue, I suppose.' }], [askTool]);
    const agentId = await publishAgent(key, 'asks', graph);
    const suite = await createSuite(key, agentId, 'asks', [{ type: 'contains', value: 'Blue' }]);
    await addCases(key, suite.id, [{ input: 'Paint the fence' }]);
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'v' }] });
    const done = await finishedExperiment(key, experiment.id, 30_000);
    const [cell] = done.results[0].cells;
    expect(cell).to.include({ status: 'completed', passed: true, output: 'Blue, I suppose.' });
    const { run, steps } = (await call('GET', `/v1/runs/${cell.run_id}`, { key })).body;
    expect(run.pending_question).to.equal(null);
    expect(steps[0]).to.include({ tool: 'ask_human', status: 'failed' });
    expect(steps[0].error).to.match(/no one answers questions in an eval run/);
  });

  it('refuses a scorer named __proto__, and a baseline from another suite', async () => {
    const agentId = await publishAgent(key, 'guarded', scriptedGraph([{ text: 'x' }]));
    const proto = await call('POST', '/v1/evals/suites', { key, body: { agent: agentId, name: 'proto', scorers: [{ type: 'exact', name: '__proto__' }] } });
    expect(proto.status).to.equal(400);
    const one = await createSuite(key, agentId, 'one', [{ type: 'exact' }]);
    const two = await createSuite(key, agentId, 'two', [{ type: 'exact' }]);
    await addCases(key, one.id, [{ input: 'q', expected: 'x' }]);
    await addCases(key, two.id, [{ input: 'q', expected: 'x' }]);
    const first = await startExperiment(key, { suite: one.id, variants: [{ name: 'v' }] });
    const refused = await call('POST', '/v1/evals/experiments', { key, body: { suite: two.id, variants: [{ name: 'v' }], baseline_experiment_id: first.id } });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.fields[0].field).to.equal('body.baseline_experiment_id');
    await finishedExperiment(key, first.id);
  });
});

