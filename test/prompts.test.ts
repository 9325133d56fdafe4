import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { publishAgent } from './support/agents.js';
import { stream } from './support/sse.js';

describe('prompts', () => {
  let key: string;
  let standardKey: string;
  beforeEach(async () => {
    ({ key, standardKey } = await newTenant('prompts'));
  });

  it('creates version 1 with 201, and answers 200 bumping the version only when the content changes', async () => {
    const created = await call('POST', '/v1/prompts', { key, body: { name: 'greeter', template: 'Hello {{name}}', description: 'greets' } });
    expect(created.status).to.equal(201);
    expect(created.body.created).to.equal(true);
    expect(created.body.prompt).to.include({ name: 'greeter', version: 1, template: 'Hello {{name}}', description: 'greets', model: null });
    expect(created.body.prompt.id).to.match(/^prm_/);
    expect(created.body.prompt.variables).to.deep.equal(['name']);

    const same = await call('POST', '/v1/prompts', { key, body: { name: 'greeter', template: 'Hello {{name}}', description: 'greets' } });
    expect(same.status).to.equal(200);
    expect(same.body).to.deep.include({ created: false });
    expect(same.body.prompt.version).to.equal(1);

    const edited = await call('POST', '/v1/prompts', { key, body: { name: 'greeter', template: 'Hi {{name}}!', description: 'greets', model: 'scripted' } });
    expect(edited.status).to.equal(200);
    expect(edited.body.prompt).to.include({ id: created.body.prompt.id, version: 2, template: 'Hi {{name}}!', model: 'scripted' });
  });

  it('versions the prompt of that name when upserting, even a name that spells another prompt’s id', async () => {
    const first = (await call('POST', '/v1/prompts', { key, body: { name: 'first', template: 'one' } })).body.prompt;
    const second = (await call('POST', '/v1/prompts', { key, body: { name: first.id, template: 'two' } })).body.prompt;
    const edited = await call('POST', '/v1/prompts', { key, body: { name: first.id, template: 'two, edited' } });
    expect(edited.status).to.equal(200);
    expect(edited.body.prompt).to.include({ id: second.id, name: first.id, version: 2, template: 'two, edited' });
    expect((await call('GET', `/v1/prompts/${first.id}`, { key })).body.prompt).to.include({ id: first.id, version: 1, template: 'one' });
  });

  it('bumps the version on PATCH of template, description or model, but not on a rename alone', async () => {
    await call('POST', '/v1/prompts', { key, body: { name: 'p', template: 'v1' } });
    const renamed = await call('PATCH', '/v1/prompts/p', { key, body: { name: 'q' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.prompt).to.include({ name: 'q', version: 1 });
    expect((await call('GET', '/v1/prompts/p', { key })).status).to.equal(404);

    expect((await call('PATCH', '/v1/prompts/q', { key, body: { template: 'v2' } })).body.prompt.version).to.equal(2);
    expect((await call('PATCH', '/v1/prompts/q', { key, body: { description: 'd' } })).body.prompt.version).to.equal(3);
    expect((await call('PATCH', '/v1/prompts/q', { key, body: { model: 'openai/gpt-4.1-mini' } })).body.prompt.version).to.equal(4);
    const cleared = await call('PATCH', '/v1/prompts/q', { key, body: { description: null, model: null } });
    expect(cleared.body.prompt).to.include({ version: 5, description: null, model: null, template: 'v2' });
    expect((await call('PATCH', '/v1/prompts/q', { key, body: { template: 'v2' } })).body.prompt.version).to.equal(5);

    const versions = await call('GET', '/v1/prompts/q/versions', { key });
    expect(versions.body.versions.map((v: { version: number; template: string }) => [v.version, v.template])).to.deep.equal([
      [5, 'v2'], [4, 'v2'], [3, 'v2'], [2, 'v2'], [1, 'v1'],
    ]);
    const first = await call('GET', '/v1/prompts/q/versions/1', { key });
    expect(first.body.version).to.include({ version: 1, template: 'v1', description: null });
    expect((await call('GET', '/v1/prompts/q/versions/9', { key })).status).to.equal(404);
  });

  it('answers 409 when a PATCH takes another prompt’s name, and 403 to a standard key', async () => {
    await call('POST', '/v1/prompts', { key, body: { name: 'a', template: 'x' } });
    await call('POST', '/v1/prompts', { key, body: { name: 'b', template: 'y' } });
    const conflict = await call('PATCH', '/v1/prompts/a', { key, body: { name: 'b' } });
    expect(conflict.status).to.equal(409);
    expect((await call('GET', '/v1/prompts/a', { key })).body.prompt.name).to.equal('a');
    const forbidden = await call('PATCH', '/v1/prompts/a', { key: standardKey, body: { template: 'z' } });
    expect(forbidden.status).to.equal(403);
    expect((await call('PATCH', '/v1/prompts/missing', { key, body: { template: 'z' } })).status).to.equal(404);
  });

  it('rejects bad templates and bodies with 400, lists and deletes', async () => {
    for (const body of [{ name: 'x' }, { name: 'x', template: '' }, { name: 'x', template: 'Hi {{ not valid }}' }, { name: 'x', template: 'ok', extra: 1 }]) {
      expect((await call('POST', '/v1/prompts', { key, body })).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await call('PATCH', '/v1/prompts/x', { key, body: {} })).status).to.equal(400);
    await call('POST', '/v1/prompts', { key, body: { name: 'keep', template: 'literal \\{{ braces' } });
    await call('POST', '/v1/prompts', { key, body: { name: 'drop', template: 'bye' } });
    expect((await call('GET', '/v1/prompts', { key })).body.prompts.map((p: { name: string }) => p.name)).to.deep.equal(['keep', 'drop']);
    const deleted = await call('DELETE', '/v1/prompts/drop', { key });
    expect(deleted.body.deleted).to.equal(true);
    expect((await call('DELETE', '/v1/prompts/drop', { key })).status).to.equal(404);
    expect((await call('GET', '/v1/prompts', { key })).body.prompts.map((p: { name: string }) => p.name)).to.deep.equal(['keep']);
  });

  it('is the system prompt of a node, pinned or current, with variables; the run records the version', async () => {
    await call('POST', '/v1/prompts', { key, body: { name: 'persona', template: 'You are {{role}} at {{company}}.', model: 'ollama/echo' } });
    await call('PATCH', '/v1/prompts/persona', { key, body: { template: 'You are {{role}}.' } });

    const pinned = await publishAgent(key, 'pinned', { nodes: [{ id: 'main', prompt: { name: 'persona', version: 1, variables: { role: 'a guide', company: 'Acme' } } }] });
    const response = await stream('POST', `/v1/agents/${pinned}/runs`, { key, body: { input: 'hi' } });
    const runId = response.frames[0]!.data.run_id;
    const { body } = await call('GET', `/v1/runs/${runId}`, { key });
    // The echo model (the prompt's default model) shows it got a system message first.
    expect(body.run).to.include({ status: 'completed', output: 'saw system,user; last: "hi"', model: 'ollama/echo' });
    expect(body.run.prompts).to.deep.equal([{ node_id: 'main', prompt_id: body.run.prompts[0].prompt_id, name: 'persona', version: 1 }]);

    const current = await publishAgent(key, 'current', { nodes: [{ id: 'main', prompt: { name: 'persona', variables: { role: 'a guide' } } }] });
    const second = await stream('POST', `/v1/agents/${current}/runs`, { key, body: { input: 'hi' } });
    const record = (await call('GET', `/v1/runs/${second.frames[0]!.data.run_id}`, { key })).body;
    expect(record.run.prompts[0].version).to.equal(2);

    const missingVariable = await publishAgent(key, 'incomplete', { nodes: [{ id: 'main', prompt: 'persona' }] });
    const failed = await stream('POST', `/v1/agents/${missingVariable}/runs`, { key, body: { input: 'hi' } });
    expect(failed.frames.at(-1)!.event).to.equal('run.failed');
    expect(failed.frames.at(-1)!.data.error.message).to.match(/missing template variable: role/);
  });

  it("keeps prompts to their tenant", async () => {
    await call('POST', '/v1/prompts', { key, body: { name: 'secret', template: 'x' } });
    const other = await newTenant('prompts-other');
    for (const [method, path, body] of [
      ['GET', '/v1/prompts/secret', undefined],
      ['GET', '/v1/prompts/secret/versions', undefined],
      ['PATCH', '/v1/prompts/secret', { template: 'y' }],
      ['DELETE', '/v1/prompts/secret', undefined],
    ] as const) {
      expect((await call(method, path, { key: other.key, body })).status, `${method} ${path}`).to.equal(404);
    }
    expect((await call('GET', '/v1/prompts', { key: other.key })).body.prompts).to.deep.equal([]);
    expect((await call('POST', '/v1/prompts', { key: other.key, body: { name: 'secret', template: 'mine' } })).status).to.equal(201);
  });
});
