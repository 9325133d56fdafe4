import { expect } from 'chai';
import { SCORER_TYPES } from '../activities/evals/scorers/types.js';
import { call, newTenant } from './support/api.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { addCases, createSuite, finishedExperiment, startExperiment } from './support/evals.js';

describe('evals: suites and cases', function () {
  this.timeout(60_000);
  let key: string;
  let agentA: string;
  let agentB: string;
  before(async () => {
    ({ key } = await newTenant('suites'));
    agentA = await publishAgent(key, 'agent-a', scriptedGraph([{ text: 'a' }]));
    agentB = await publishAgent(key, 'agent-b', scriptedGraph([{ text: 'b' }]));
  });

  it('upserts by (agent, name): 201, then 200 with the fields replaced; names are unique per agent, not per workspace', async () => {
    const created = await call('POST', '/v1/evals/suites', { key, body: { agent: 'agent-a', name: 'smoke', description: 'first', scorers: [{ type: 'exact' }] } });
    expect(created.status).to.equal(201);
    expect(created.body.suite).to.include({ name: 'smoke', agent_id: agentA, description: 'first', case_count: 0 });
    const again = await call('POST', '/v1/evals/suites', { key, body: { agent: agentA, name: 'smoke', description: 'second' } });
    expect(again.status).to.equal(200);
    expect(again.body.suite).to.include({ id: created.body.suite.id, description: 'second' });
    expect(again.body.suite.scorers).to.deep.equal([{ type: 'exact' }]);
    const other = await call('POST', '/v1/evals/suites', { key, body: { agent: 'agent-b', name: 'smoke' } });
    expect(other.status).to.equal(201);
    expect(other.body.suite.id).to.not.equal(created.body.suite.id);

    const listed = (await call('GET', `/v1/evals/suites?agent=agent-b`, { key })).body.suites;
    expect(listed.map((s: any) => s.id)).to.deep.equal([other.body.suite.id]);
    expect((await call('POST', '/v1/evals/suites', { key, body: { agent: 'nobody', name: 'x' } })).status).to.equal(404);
  });

  it('answers 409 with the matching ids for a name two agents share; the id, or ?agent=, picks one', async () => {
    const a = await createSuite(key, agentA, 'shared');
    const b = await createSuite(key, agentB, 'shared');
    const ambiguous = await call('GET', '/v1/evals/suites/shared', { key });
    expect(ambiguous.status).to.equal(409);
    expect(ambiguous.body.error.code).to.equal('conflict');
    expect(ambiguous.body.error.matching_ids).to.have.members([a.id, b.id]);
    for (const [method, path] of [
      ['PATCH', '/v1/evals/suites/shared'],
      ['DELETE', '/v1/evals/suites/shared'],
      ['GET', '/v1/evals/suites/shared/cases'],
      ['POST', '/v1/evals/suites/shared/cases'],
    ] as const) {
      const body = method === 'PATCH' ? { description: 'x' } : method === 'POST' ? { input: 'x' } : undefined;
      const response = await call(method, path, { key, body });
      expect(response.status, `${method} ${path}`).to.equal(409);
      expect(response.body.error.matching_ids).to.have.members([a.id, b.id]);
    }
    expect((await call('GET', '/v1/evals/suites/shared?agent=agent-b', { key })).body.suite.id).to.equal(b.id);
    expect((await call('GET', `/v1/evals/suites/${a.id}`, { key })).body.suite.id).to.equal(a.id);
    // An experiment cannot start on an ambiguous name either, and nothing is created.
    const refused = await call('POST', '/v1/evals/experiments', { key, body: { suite: 'shared', variants: [{ name: 'v' }] } });
    expect(refused.status).to.equal(409);
  });

  it('renames with PATCH (409 when the agent already has that name) and deletes with its cases; 404s', async () => {
    const suite = await createSuite(key, agentA, 'to-rename');
    await createSuite(key, agentA, 'taken');
    expect((await call('PATCH', `/v1/evals/suites/${suite.id}`, { key, body: { name: 'taken' } })).status).to.equal(409);
    const renamed = await call('PATCH', `/v1/evals/suites/${suite.id}`, { key, body: { name: 'renamed', scorers: [{ type: 'contains' }] } });
    expect(renamed.body.suite).to.include({ name: 'renamed' });
    expect(renamed.body.suite.scorers).to.deep.equal([{ type: 'contains' }]);
    const [added] = await addCases(key, suite.id, [{ input: 'q', expected: 'a' }]);
    const deleted = await call('DELETE', '/v1/evals/suites/renamed?agent=agent-a', { key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: suite.id });
    expect((await call('GET', `/v1/evals/suites/${suite.id}`, { key })).status).to.equal(404);
    expect((await call('DELETE', `/v1/evals/cases/${added!.id}`, { key })).status).to.equal(404);
    expect((await call('PATCH', '/v1/evals/suites/nothing', { key, body: { description: 'x' } })).status).to.equal(404);
  });

  it('adds one case or a batch of up to 1,000, all or nothing, and pages through them', async () => {
    const suite = await createSuite(key, agentA, 'cases', [{ type: 'contains' }]);
    const one = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { input: 'hello', expected: 'hi', tags: ['greeting'], metadata: { lang: 'en' } } });
    expect(one.status).to.equal(201);
    expect(one.body.cases[0]).to.include({ input: 'hello', expected: 'hi', suite_id: suite.id, scorers: null });
    expect(one.body.cases[0].tags).to.deep.equal(['greeting']);

    const batch = Array.from({ length: 1000 }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }));
    expect((await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { cases: batch } })).status).to.equal(201);
    const tooMany = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { cases: [...batch, { input: 'x', expected: 'y' }] } });
    expect(tooMany.status).to.equal(400);

    // One bad case (contains needs a string to look for) refuses the whole batch.
    const bad = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { cases: [{ input: 'fine', expected: 'ok' }, { input: 'no expected' }] } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.fields.map((f: any) => f.field).join(' ')).to.contain('body.cases[1]');
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = { deeper: deep };
    const tooDeep = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { input: 'x', expected: 'y', metadata: deep } });
    expect(tooDeep.status).to.equal(400);
    expect(tooDeep.body.error.message).to.contain('nests deeper than 64');
    const badScorer = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { input: 'x', scorers: [{ type: 'regex', pattern: '(a)\\1' }] } });
    expect(badScorer.status).to.equal(400);
    // Each distinct JSON Schema is compiled to be checked: at most 100 a request (the same one counts once).
    const withSchema = (i: number) => ({ input: `s${i}`, expected: null, scorers: [{ type: 'json_schema', schema: { type: 'object', title: `schema ${i}` } }] });
    const manySchemas = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { cases: Array.from({ length: 101 }, (_, i) => withSchema(i)) } });
    expect(manySchemas.status).to.equal(400);
    expect(manySchemas.body.error.fields).to.deep.equal([{ field: 'body.cases', message: "the cases' json_schema scorers bring 101 distinct schemas; at most 100 are allowed in one request (add the cases in several)" }]);
    const sameSchema = await call('POST', `/v1/evals/suites/${suite.id}/cases`, { key, body: { cases: Array.from({ length: 101 }, (_, i) => ({ ...withSchema(0), input: `same ${i}` })) } });
    expect(sameSchema.status, JSON.stringify(sameSchema.body)).to.equal(201);
    expect((await call('GET', `/v1/evals/suites/${suite.id}`, { key })).body.suite.case_count).to.equal(1102);

    expect((await call('GET', `/v1/evals/suites/${suite.id}/cases?limit=201`, { key })).status).to.equal(400);
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await call('GET', `/v1/evals/suites/${suite.id}/cases?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key })).body;
      all.push(...page.cases);
      cursor = page.next_cursor;
    } while (cursor);
    expect(all).to.have.length(1102);
    expect(all[0].input).to.equal('hello');
    expect(all[1000].input).to.equal('q999');

    const removed = await call('DELETE', `/v1/evals/cases/${all[1].id}`, { key });
    expect(removed.body).to.deep.equal({ deleted: true, id: all[1].id });
    expect((await call('DELETE', `/v1/evals/cases/${all[1].id}`, { key })).status).to.equal(404);
  });

  it('refuses unknown scorers and unsafe patterns with a 400 naming the field', async () => {
    const unknown = await call('POST', '/v1/evals/suites', { key, body: { agent: agentA, name: 'bad', scorers: [{ type: 'vibes' }] } });
    expect(unknown.status).to.equal(400);
    // The body schema lists the types (an enum), so this is its error, named as schema errors are.
    expect(unknown.body.error.fields[0]).to.deep.equal({ field: 'body.scorers.0.type', message: `must be one of ${SCORER_TYPES.join(', ')}` });
    const unsafe = await call('POST', '/v1/evals/suites', { key, body: { agent: agentA, name: 'bad', scorers: [{ type: 'regex', pattern: '(a)\\1' }] } });
    expect(unsafe.status).to.equal(400);
    expect(unsafe.body.error.fields[0].field).to.equal('body.scorers[0].pattern');
    expect((await call('GET', '/v1/evals/suites/bad', { key })).status).to.equal(404);
  });

  it("keeps a finished experiment's results readable after its suite is deleted", async () => {
    const suite = await createSuite(key, agentA, 'ephemeral', [{ type: 'exact' }]);
    await addCases(key, suite.id, [{ input: 'x', expected: 'a' }]);
    const experiment = await startExperiment(key, { suite: suite.id, variants: [{ name: 'only' }] });
    await finishedExperiment(key, experiment.id);
    expect((await call('DELETE', `/v1/evals/suites/${suite.id}`, { key })).status).to.equal(200);
    const after = await call('GET', `/v1/evals/experiments/${experiment.id}?results=true`, { key });
    expect(after.status).to.equal(200);
    expect(after.body.experiment).to.include({ status: 'completed', suite_id: suite.id, suite_name: 'ephemeral' });
    expect(after.body.results[0]).to.include({ input: 'x', expected: 'a' });
    expect(after.body.results[0].cells[0]).to.include({ status: 'completed', passed: true, output: 'a' });
    const listed = (await call('GET', `/v1/evals/experiments?suite=${suite.id}`, { key })).body.experiments;
    expect(listed.map((e: any) => e.id)).to.deep.equal([experiment.id]);
  });
});

describe('evals: tenant isolation', function () {
  this.timeout(60_000);

  it("answers 404 for another tenant's suites, cases and experiments on every endpoint", async () => {
    const owner = await newTenant('evals-owner');
    const stranger = await newTenant('evals-stranger');
    const agentId = await publishAgent(owner.key, 'private', scriptedGraph([{ text: 'secret' }]));
    const suite = await createSuite(owner.key, agentId, 'private-suite', [{ type: 'exact' }]);
    const [c] = await addCases(owner.key, suite.id, [{ input: 'q', expected: 'secret' }]);
    const experiment = await startExperiment(owner.key, { suite: suite.id, variants: [{ name: 'v' }] });
    await finishedExperiment(owner.key, experiment.id);

    const key = stranger.key;
    for (const [method, path, body] of [
      ['GET', `/v1/evals/suites/${suite.id}`],
      ['GET', '/v1/evals/suites/private-suite'],
      ['PATCH', `/v1/evals/suites/${suite.id}`, { description: 'mine now' }],
      ['DELETE', `/v1/evals/suites/${suite.id}`],
      ['GET', `/v1/evals/suites/${suite.id}/cases`],
      ['POST', `/v1/evals/suites/${suite.id}/cases`, { input: 'x' }],
      ['DELETE', `/v1/evals/cases/${c!.id}`],
      ['GET', `/v1/evals/experiments/${experiment.id}`],
      ['GET', `/v1/evals/experiments/${experiment.id}?results=true`],
      ['PATCH', `/v1/evals/experiments/${experiment.id}`, { name: 'x' }],
      ['DELETE', `/v1/evals/experiments/${experiment.id}`],
      ['GET', `/v1/evals/experiments/${experiment.id}/events`],
      ['POST', '/v1/evals/suites', { agent: agentId, name: 'hijack' }],
      ['POST', '/v1/evals/experiments', { suite: suite.id, variants: [{ name: 'v' }] }],
      ['GET', `/v1/evals/experiments?suite=private-suite`],
      ['GET', `/v1/evals/suites?agent=${agentId}`],
    ] as const) {
      const response = await call(method, path, { key, body });
      expect(response.status, `${method} ${path}`).to.equal(404);
    }
    // Nor do their runs, nor may a baseline be another tenant's experiment.
    const runId = (await call('GET', `/v1/evals/experiments/${experiment.id}?results=true`, { key: owner.key })).body.results[0].cells[0].run_id;
    expect((await call('GET', `/v1/runs/${runId}`, { key })).status).to.equal(404);
    const strangerAgent = await publishAgent(key, 'mine', scriptedGraph([{ text: 'x' }]));
    const strangerSuite = await createSuite(key, strangerAgent, 'mine', [{ type: 'exact' }]);
    await addCases(key, strangerSuite.id, [{ input: 'q', expected: 'x' }]);
    const baseline = await call('POST', '/v1/evals/experiments', { key, body: { suite: strangerSuite.id, variants: [{ name: 'v' }], baseline_experiment_id: experiment.id } });
    expect(baseline.status).to.equal(400);
    expect(baseline.body.error.message).to.contain('not found');
    expect((await call('GET', '/v1/evals/suites', { key })).body.suites.map((s: any) => s.id)).to.deep.equal([strangerSuite.id]);
    expect((await call('GET', '/v1/evals/experiments', { key })).body.experiments).to.deep.equal([]);
    expect((await call('GET', `/v1/evals/experiments?suite=${strangerSuite.id}`, { key })).body.experiments).to.deep.equal([]);
    expect((await call('GET', `/v1/evals/experiments?suite=${suite.id}`, { key })).body.experiments).to.deep.equal([]);
    // Nothing of the owner's changed.
    expect((await call('GET', `/v1/evals/suites/${suite.id}`, { key: owner.key })).body.suite).to.include({ description: null, case_count: 1 });
    expect((await call('GET', `/v1/evals/experiments/${experiment.id}`, { key: owner.key })).body.experiment.name).to.equal(experiment.name);
  });
});
