import { expect } from 'chai';
import { defaultPayloadConverter } from '@temporalio/common';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, createTool, publishAgent } from './support/agents.js';
import { ALLOWED_TOOL_HOST, testPlatform } from './support/global.js';
import { stream } from './support/sse.js';
import { chatCompletionStream } from './support/wire-servers/openai.js';
import { startWireServer, type WireServer } from './support/wire-servers/sse-server.js';

/** A multipart form as raw bytes with its content type, so `call` checks the answer against the document. */
async function multipart(form: FormData): Promise<{ rawBody: Buffer; headers: Record<string, string> }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { rawBody: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type')! } };
}

async function importFile(key: string, text: string | Uint8Array, filename = 'SKILL.md') {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/markdown' }), filename);
  return call('POST', '/v1/skills/import', { key, ...(await multipart(form)) });
}

const SKILL_MD = [
  '---',
  'name: pdf-forms',
  'description: "Fill in PDF forms: use when the user asks to complete a form."',
  'license: Apache-2.0',
  'allowed-tools: Read, Write',
  'metadata:',
  '  author: someone',
  '  version: "1.2"',
  '---',
  '',
  '# Filling PDF forms',
  '',
  '1. Read the form fields first.',
  '',
].join('\r\n');

describe('skills: the resource', () => {
  let key: string;
  let standardKey: string;
  let calculator: string;
  beforeEach(async () => {
    ({ key, standardKey } = await newTenant('skills'));
    calculator = await createBuiltinTool(key, 'calculator');
  });

  it('creates version 1 with 201, answers 200 unchanged for the same content, and versions a change', async () => {
    const body = { name: 'refunds', description: 'How to refund an order', instructions: '# Refunds\n\nCheck the order first.' };
    const created = await call('POST', '/v1/skills', { key, body: { ...body, tools: ['calculator'] } });
    expect(created.status).to.equal(201);
    expect(created.body.created).to.equal(true);
    expect(created.body.skill).to.include({ name: 'refunds', version: 1, description: body.description, instructions: body.instructions });
    expect(created.body.skill.id).to.match(/^skl_/);
    // Named by name, stored by id.
    expect(created.body.skill.tools).to.deep.equal([calculator]);

    const same = await call('POST', '/v1/skills', { key, body: { ...body, tools: [calculator] } });
    expect(same.status).to.equal(200);
    expect(same.body).to.deep.include({ created: false });
    expect(same.body.skill.version).to.equal(1);

    const edited = await call('POST', '/v1/skills', { key, body: { ...body, instructions: 'Refund within 30 days.', tools: [calculator] } });
    expect(edited.status).to.equal(200);
    expect(edited.body.skill).to.include({ id: created.body.skill.id, version: 2, instructions: 'Refund within 30 days.' });
    // The body is the whole definition: omitted tools are none, a new version.
    const toolless = await call('POST', '/v1/skills', { key, body: { ...body, instructions: 'Refund within 30 days.' } });
    expect(toolless.body.skill).to.include({ version: 3 });
    expect(toolless.body.skill.tools).to.deep.equal([]);

    const byName = await call('GET', '/v1/skills/refunds', { key });
    const byId = await call('GET', `/v1/skills/${created.body.skill.id}`, { key });
    expect(byName.body).to.deep.equal(byId.body);
    expect(byName.body.skill).to.include({ version: 3, instructions: 'Refund within 30 days.' });

    const versions = await call('GET', '/v1/skills/refunds/versions', { key });
    expect(versions.body).to.include({ skill_id: created.body.skill.id, name: 'refunds' });
    expect(versions.body.versions.map((v: any) => [v.version, v.instructions, v.tools])).to.deep.equal([
      [3, 'Refund within 30 days.', []],
      [2, 'Refund within 30 days.', [calculator]],
      [1, body.instructions, [calculator]],
    ]);
    expect((await call('GET', '/v1/skills/refunds/versions/1', { key })).body.version).to.include({ version: 1, instructions: body.instructions });
    expect((await call('GET', '/v1/skills/refunds/versions/9', { key })).status).to.equal(404);
  });

  it('makes every PATCH of content a new version, keeps all of them, and renames without one', async () => {
    await call('POST', '/v1/skills', { key, body: { name: 's', description: 'd1', instructions: 'i1' } });
    const renamed = await call('PATCH', '/v1/skills/s', { key, body: { name: 't' } });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.skill).to.include({ name: 't', version: 1 });
    expect((await call('GET', '/v1/skills/s', { key })).status).to.equal(404);

    expect((await call('PATCH', '/v1/skills/t', { key, body: { description: 'd2' } })).body.skill.version).to.equal(2);
    expect((await call('PATCH', '/v1/skills/t', { key, body: { instructions: 'i2' } })).body.skill.version).to.equal(3);
    const withTools = await call('PATCH', '/v1/skills/t', { key, body: { tools: [calculator] } });
    expect(withTools.body.skill).to.include({ version: 4, description: 'd2', instructions: 'i2' });
    expect(withTools.body.skill.tools).to.deep.equal([calculator]);
    expect((await call('PATCH', '/v1/skills/t', { key, body: { instructions: 'i2' } })).body.skill.version).to.equal(4);
    const versions = await call('GET', '/v1/skills/t/versions', { key });
    expect(versions.body.versions.map((v: any) => [v.version, v.description, v.instructions])).to.deep.equal([
      [4, 'd2', 'i2'], [3, 'd2', 'i2'], [2, 'd2', 'i1'], [1, 'd1', 'i1'],
    ]);

    await call('POST', '/v1/skills', { key, body: { name: 'u', description: 'd', instructions: 'i' } });
    expect((await call('PATCH', '/v1/skills/t', { key, body: { name: 'u' } })).status).to.equal(409);
    expect((await call('PATCH', '/v1/skills/t', { key: standardKey, body: { instructions: 'x' } })).status).to.equal(403);
    expect((await call('PATCH', '/v1/skills/missing', { key, body: { instructions: 'x' } })).status).to.equal(404);
    expect((await call('PATCH', '/v1/skills/t', { key, body: {} })).status).to.equal(400);
  });

  it('refuses bad bodies with 400 and writes nothing', async () => {
    const ok = { name: 'x', description: 'd', instructions: 'i' };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x', description: 'd' }, 'body.instructions'],
      [{ ...ok, instructions: '' }, 'body.instructions'],
      [{ ...ok, instructions: 'a'.repeat(100_001) }, 'body.instructions'],
      [{ ...ok, description: 'a'.repeat(1025) }, 'body.description'],
      [{ ...ok, name: 'import' }, 'body.name'],
      [{ ...ok, name: 'a/b' }, 'body.name'],
      [{ ...ok, tools: ['no-such-tool'] }, 'body.tools.0'],
      [{ ...ok, tools: [calculator, 'tool_missing'] }, 'body.tools.1'],
      [{ ...ok, extra: 1 }, 'body.extra'],
    ];
    for (const [body, field] of bad) {
      const response = await call('POST', '/v1/skills', { key, body });
      expect(response.status, JSON.stringify(body).slice(0, 200)).to.equal(400);
      expect(response.body.error.code).to.equal('invalid_request');
      expect(response.body.error.fields.map((f: { field: string }) => f.field), response.body.error.message).to.include(field);
    }
    expect((await call('GET', '/v1/skills', { key })).body.skills).to.deep.equal([]);
    expect((await call('PATCH', '/v1/skills/x', { key, body: { tools: ['nope'] } })).status).to.equal(404);
    await call('POST', '/v1/skills', { key, body: ok });
    const badPatch = await call('PATCH', '/v1/skills/x', { key, body: { tools: ['nope'] } });
    expect(badPatch.status).to.equal(400);
    expect((await call('GET', '/v1/skills/x/versions', { key })).body.versions).to.have.length(1);
  });

  it('lists a page at a time and deletes with the versions', async () => {
    for (const name of ['a', 'b', 'c']) await call('POST', '/v1/skills', { key, body: { name, description: `about ${name}`, instructions: name } });
    const first = await call('GET', '/v1/skills?limit=2', { key });
    expect(first.body.skills.map((s: { name: string }) => s.name)).to.deep.equal(['a', 'b']);
    const rest = await call('GET', `/v1/skills?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(rest.body.skills.map((s: { name: string }) => s.name)).to.deep.equal(['c']);
    expect(rest.body.next_cursor).to.equal(null);
    expect(rest.body.skills[0]).to.include({ description: 'about c', instructions: 'c', version: 1 });

    const deleted = await call('DELETE', '/v1/skills/b', { key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: first.body.skills[1].id });
    expect((await call('GET', '/v1/skills/b', { key })).status).to.equal(404);
    expect((await call('GET', `/v1/skills/${first.body.skills[1].id}/versions`, { key })).status).to.equal(404);
    expect((await call('DELETE', '/v1/skills/b', { key })).status).to.equal(404);
  });

  it("answers 404 for another workspace's skill, by id and by name", async () => {
    const mine = (await call('POST', '/v1/skills', { key, body: { name: 'private', description: 'd', instructions: 'secret steps' } })).body.skill;
    const other = await newTenant('skills-other');
    for (const ref of [mine.id, 'private']) {
      expect((await call('GET', `/v1/skills/${ref}`, { key: other.key })).status).to.equal(404);
      expect((await call('GET', `/v1/skills/${ref}/versions`, { key: other.key })).status).to.equal(404);
      expect((await call('GET', `/v1/skills/${ref}/versions/1`, { key: other.key })).status).to.equal(404);
      expect((await call('PATCH', `/v1/skills/${ref}`, { key: other.key, body: { instructions: 'x' } })).status).to.equal(404);
      expect((await call('DELETE', `/v1/skills/${ref}`, { key: other.key })).status).to.equal(404);
    }
    expect((await call('GET', '/v1/skills', { key: other.key })).body.skills).to.deep.equal([]);
    // The same name in the other workspace is its own skill; a tool of this workspace is unknown there.
    const theirs = await call('POST', '/v1/skills', { key: other.key, body: { name: 'private', description: 'd', instructions: 'theirs' } });
    expect(theirs.status).to.equal(201);
    expect((await call('POST', '/v1/skills', { key: other.key, body: { name: 'x', description: 'd', instructions: 'i', tools: [calculator] } })).status).to.equal(400);
    expect((await call('GET', `/v1/skills/${mine.id}`, { key })).body.skill).to.include({ instructions: 'secret steps', version: 1 });
  });

  it('imports a SKILL.md as a multipart file, a text/markdown body or JSON, keeping tools on re-import', async () => {
    const created = await importFile(key, SKILL_MD);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.skill).to.include({
      name: 'pdf-forms',
      version: 1,
      description: 'Fill in PDF forms: use when the user asks to complete a form.',
      instructions: '# Filling PDF forms\n\n1. Read the form fields first.',
    });
    expect(created.body.skill.tools).to.deep.equal([]);

    const again = await importFile(key, SKILL_MD);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.include({ created: false });
    expect(again.body.skill.version).to.equal(1);

    await call('PATCH', '/v1/skills/pdf-forms', { key, body: { tools: [calculator] } });
    const raw = await call('POST', '/v1/skills/import', {
      key,
      rawBody: SKILL_MD.replace('Read the form fields first.', 'Read every field.'),
      headers: { 'content-type': 'text/markdown; charset=utf-8' },
    });
    expect(raw.status).to.equal(200);
    expect(raw.body.skill).to.include({ version: 3, instructions: '# Filling PDF forms\n\n1. Read every field.' });
    expect(raw.body.skill.tools).to.deep.equal([calculator]);

    const json = await call('POST', '/v1/skills/import', { key, body: { content: '---\nname: json-skill\ndescription: from JSON\n---\nDo it.' } });
    expect(json.status).to.equal(201);
    expect(json.body.skill).to.include({ name: 'json-skill', description: 'from JSON', instructions: 'Do it.' });
  });

  it('refuses a SKILL.md without valid front matter, name, description or instructions with a clear 400', async () => {
    const bad: Array<[string, RegExp]> = [
      ['# Just markdown\n\nNo front matter.', /must start with YAML front matter/],
      ['---\nname: x\ndescription: y\n', /must start with YAML front matter/],
      ['---\ndescription: no name\n---\nBody', /has no "name"/],
      ['---\nname: no-description\n---\nBody', /has no "description"/],
      ['---\nname: x\ndescription: "   "\n---\nBody', /"description" is empty/],
      ['---\nname: [a, b]\ndescription: y\n---\nBody', /"name" must be a string/],
      ['---\nname: x\ndescription: y\n---\n\n   \n', /no instructions/],
      ['---\nname: x\ndescription: y\nname: z\n---\nBody', /not valid YAML/],
      ['---\nname: "unterminated\ndescription: y\n---\nBody', /not valid YAML/],
      ['---\n- a list\n---\nBody', /must be a mapping/],
      ['---\nname: import\ndescription: y\n---\nBody', /SKILL\.md: .*body\.name/],
      ['---\nname: a/b\ndescription: y\n---\nBody', /SKILL\.md: .*body\.name/],
      [`---\nname: x\ndescription: ${'d'.repeat(1025)}\n---\nBody`, /SKILL\.md: .*body\.description/],
      [`---\nname: x\ndescription: y\n---\n${'i'.repeat(100_001)}`, /SKILL\.md: .*body\.instructions/],
      // Refused before it is parsed.
      [`---\nname: x\ndescription: y\nmetadata: "${'m'.repeat(64 * 1024)}"\n---\nBody`, /front matter is 65571 bytes; at most 65536 are allowed/],
    ];
    for (const [text, message] of bad) {
      const response = await importFile(key, text);
      expect(response.status, text.slice(0, 80)).to.equal(400);
      expect(response.body.error.code).to.equal('invalid_request');
      expect(response.body.error.message, text.slice(0, 80)).to.match(message);
    }
    const notUtf8 = await importFile(key, new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x0a]));
    expect(notUtf8.status).to.equal(400);
    expect(notUtf8.body.error.message).to.match(/UTF-8/);
    const nul = await importFile(key, '---\nname: x\ndescription: y\n---\nBody \u0000 here');
    expect(nul.status).to.equal(400);
    expect((await call('POST', '/v1/skills/import', { key, rawBody: '<skill/>', headers: { 'content-type': 'application/xml' } })).status).to.equal(415);
    expect((await call('POST', '/v1/skills/import', { key, body: { content: '' } })).status).to.equal(400);
    const form = new FormData();
    form.append('other', 'no file here');
    expect((await call('POST', '/v1/skills/import', { key, ...(await multipart(form)) })).status).to.equal(400);
    expect((await call('GET', '/v1/skills', { key })).body.skills).to.deep.equal([]);
  });

  it('sends no YAML warning to the process (stderr): unknown tags are read as plain values', async () => {
    const tags = Array.from({ length: 200 }, (_, i) => `  k${i}: !tag${i} v`).join('\n');
    const warnings: unknown[] = [];
    const emitWarning = process.emitWarning;
    process.emitWarning = ((warning: unknown) => void warnings.push(warning)) as typeof process.emitWarning;
    try {
      const response = await importFile(key, `---\nname: !custom tagged\ndescription: !other d\nmetadata:\n${tags}\n---\nBody`);
      expect(response.status).to.equal(201);
      expect(response.body.skill).to.include({ name: 'tagged', description: 'd' });
    } finally {
      process.emitWarning = emitWarning;
    }
    expect(warnings).to.deep.equal([]);
  });

  it('documents a JSON content limit that a JSON body can hold, even with every character escaped', async () => {
    const document = (await call('GET', '/openapi.json')).body;
    const schema = document.paths['/v1/skills/import'].post.requestBody.content['application/json'].schema;
    const maxLength: number = schema.properties.content.maxLength;
    expect(maxLength).to.be.at.least(80_000);
    // maxLength characters outside the BMP, each escaped as a surrogate pair (12 bytes): read (400), not refused as too large (413).
    const rawBody = `{"content":"${'\\ud83d\\ude00'.repeat(maxLength)}"}`;
    const response = await call('POST', '/v1/skills/import', { key, rawBody });
    expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(400);
    expect(response.body.error.message).to.match(/must start with YAML front matter/);
    const over = await call('POST', '/v1/skills/import', { key, body: { content: 'x'.repeat(maxLength + 1) } });
    expect(over.status).to.equal(400);
    expect(over.body.error.message).to.match(/content/);
  });
});

interface SentTurn {
  messages: Array<{ role: string; content: string; toolName?: string }>;
  tools: Array<{ name: string; id: string }>;
}

/** What each model turn of the run was sent, as the workflow handed it to the `callModel` activity (its Temporal history). */
async function modelRequests(runId: string): Promise<SentTurn[]> {
  const history = await testPlatform().temporal.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') return [];
    return [defaultPayloadConverter.fromPayload(scheduled.input!.payloads![0]!) as SentTurn];
  });
}

describe('skills: in runs', () => {
  let key: string;
  let calculator: string;
  let refundsId: string;
  before(async () => {
    ({ key } = await newTenant('skills-runs'));
    calculator = await createBuiltinTool(key, 'calculator');
    const v1 = await call('POST', '/v1/skills', {
      key,
      body: { name: 'refunds', description: 'Refund an order', instructions: 'REFUND-V1: refund in full.', tools: [calculator] },
    });
    refundsId = v1.body.skill.id;
    await call('PATCH', '/v1/skills/refunds', { key, body: { instructions: 'REFUND-V2: compute the refund with the calculator.' } });
    await call('POST', '/v1/skills', { key, body: { name: 'shipping', description: 'Ship an order', instructions: 'SHIPPING' } });
  });

  async function run(graph: Record<string, unknown>, input = 'help') {
    const agentId = await publishAgent(key, `skilled-${Math.random().toString(36).slice(2, 8)}`, graph);
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input } });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const runId: string = response.frames[0]!.data.run_id;
    return { runId, record: (await call('GET', `/v1/runs/${runId}`, { key })).body };
  }

  it('lists skills, loads one so the next model request carries its instructions and tools, and records the version', async () => {
    const { runId, record } = await run({
      nodes: [{
        id: 'main',
        model: 'scripted',
        toolRefs: [],
        skills: ['refunds'],
        script: [
          { tool_calls: [{ tool: 'calculator', arguments: { expression: '1+1' } }, { tool: 'list_skills' }] },
          { tool_calls: [{ tool: 'use_skill', arguments: { name: 'refunds' } }, { tool: 'use_skill', arguments: { name: 'shipping' } }] },
          { tool_calls: [{ tool: 'calculator', arguments: { expression: '6*7' } }, { tool: 'use_skill', arguments: { name: 'refunds' } }] },
          { text: 'Refunded 42.' },
        ],
      }],
    });
    expect(record.run.status, JSON.stringify(record.run.error)).to.equal('completed');
    expect(record.run.output).to.equal('Refunded 42.');
    expect(record.run.skills).to.deep.equal([{ node_id: 'main', skill_id: refundsId, name: 'refunds', version: 2 }]);

    const steps = record.steps;
    expect(steps.map((s: { tool: string; status: string }) => [s.tool, s.status])).to.deep.equal([
      ['calculator', 'failed'],
      ['list_skills', 'completed'],
      ['use_skill', 'completed'],
      ['use_skill', 'failed'],
      ['calculator', 'completed'],
      ['use_skill', 'completed'],
    ]);
    expect(steps[0].error).to.match(/unknown tool 'calculator'/);
    expect(steps[1].result).to.deep.equal({ skills: [{ name: 'refunds', description: 'Refund an order', version: 2, loaded: false }] });
    expect(steps[1].tool_id).to.equal(null);
    expect(steps[2].result).to.deep.equal({ skill: 'refunds', version: 2, tools: ['calculator'], loaded: true });
    expect(steps[3].error).to.match(/skill 'shipping' is not one this node may use/);
    expect(steps[4].result).to.deep.equal({ result: 42 });
    expect(steps[4].tool_id).to.equal(calculator);
    expect(steps[5].result).to.deep.include({ already_loaded: true });

    const sent = await modelRequests(runId);
    expect(sent).to.have.length(4);
    const instructionMessages = (turn: SentTurn) => turn.messages.filter((m) => m.content.includes('REFUND-V2'));
    for (const turn of sent.slice(0, 2)) {
      expect(turn.tools.map((t) => t.name)).to.deep.equal(['list_skills', 'use_skill']);
      expect(instructionMessages(turn)).to.have.length(0);
    }
    // The turn after use_skill: the instructions follow that turn's tool results, and the skill's tool is offered.
    const after = sent[2]!;
    expect(after.tools.map((t) => t.name)).to.deep.equal(['list_skills', 'use_skill', 'calculator']);
    expect(after.messages.map((m) => m.role).slice(-4)).to.deep.equal(['assistant', 'tool', 'tool', 'user']);
    expect(after.messages.at(-1)!.content).to.match(/^Skill "refunds" \(version 2\) is loaded\./);
    expect(after.messages.at(-1)!.content).to.include('REFUND-V2: compute the refund with the calculator.');
    // Loading it again adds nothing.
    expect(instructionMessages(sent[3]!)).to.have.length(1);
    expect(sent[3]!.messages.some((m) => m.content.includes('REFUND-V1'))).to.equal(false);
  });

  it('uses a pinned version', async () => {
    const { runId, record } = await run({
      nodes: [{
        id: 'main',
        model: 'scripted',
        toolRefs: [],
        skills: [{ name: 'refunds', version: 1 }, 'shipping'],
        script: [{ tool_calls: [{ tool: 'use_skill', arguments: { name: 'refunds' } }] }, { text: 'ok' }],
      }],
    });
    expect(record.run.status).to.equal('completed');
    expect(record.run.skills).to.deep.equal([{ node_id: 'main', skill_id: refundsId, name: 'refunds', version: 1 }]);
    const sent = await modelRequests(runId);
    expect(sent[1]!.messages.at(-1)!.content).to.include('REFUND-V1: refund in full.');
    expect(sent.some((turn) => turn.messages.some((m) => m.content.includes('REFUND-V2')))).to.equal(false);
  });

  it('gives each node its own skills: a later node starts without what an earlier one loaded', async () => {
    const { runId, record } = await run({
      nodes: [
        { id: 'first', model: 'scripted', toolRefs: [], skills: ['refunds'], script: [{ tool_calls: [{ tool: 'use_skill', arguments: { name: 'refunds' } }] }, { text: 'one' }] },
        { id: 'second', model: 'scripted', toolRefs: [], skills: ['shipping'], script: [{ tool_calls: [{ tool: 'use_skill', arguments: { name: 'refunds' } }] }, { text: 'two' }] },
      ],
      edges: [{ from: 'first', to: 'second' }],
    });
    expect(record.run.status).to.equal('completed');
    expect(record.run.skills).to.deep.equal([{ node_id: 'first', skill_id: refundsId, name: 'refunds', version: 2 }]);
    expect(record.steps[1]).to.include({ tool: 'use_skill', status: 'failed' });
    const sent = await modelRequests(runId);
    expect(sent[2]!.tools.map((t) => t.name)).to.deep.equal(['list_skills', 'use_skill']);
    expect(sent[2]!.messages.some((m) => m.content.includes('REFUND'))).to.equal(false);
  });

  it('fails the run as an invalid graph for an unknown skill, version or skills value', async () => {
    for (const [skills, message] of [
      [['missing'], /uses skill 'missing', which does not exist/],
      [[{ name: 'refunds', version: 9 }], /pins version 9 of skill 'refunds'/],
      ['refunds', /"skills" must be a list/],
      [[{ name: 'refunds', version: 0 }], /each of "skills" must be/],
      [['refunds', 'refunds'], /twice/],
    ] as Array<[unknown, RegExp]>) {
      const { record } = await run({ nodes: [{ id: 'main', model: 'scripted', toolRefs: [], skills, script: [{ text: 'never' }] }] });
      expect(record.run.status).to.equal('failed');
      expect(record.run.error.code).to.equal('invalid_graph');
      expect(record.run.error.message).to.match(message);
    }
  });

  it("fails the run as an invalid graph when the plan would carry over 256 KB of skill instructions, naming the node and the total", async () => {
    for (const [name, text] of [['big-a', 'a'], ['big-b', 'b'], ['big-c', 'c'], ['big-accented', 'é']] as Array<[string, string]>) {
      const created = await call('POST', '/v1/skills', { key, body: { name, description: 'big', instructions: text.repeat(100_000) } });
      expect(created.status).to.equal(201);
    }
    const node = (id: string, skills: string[]) => ({ id, model: 'scripted', toolRefs: [], skills, script: [{ text: id }] });
    // Counted in UTF-8 bytes: 100,000 ASCII characters and 100,000 accented ones are 300,000 bytes.
    const bytes = await run({ nodes: [node('main', ['big-a', 'big-accented'])] });
    expect(bytes.record.run.error).to.include({ code: 'invalid_graph' });
    expect(bytes.record.run.error.message).to.match(/node 'main': its skills' instructions \(300000 bytes\) bring the run's total to 300000 bytes; at most 262144/);
    // Across the nodes: the third one goes over.
    const edges = [{ from: 'one', to: 'two' }, { from: 'two', to: 'three' }];
    const across = await run({ nodes: [node('one', ['big-a']), node('two', ['big-b']), node('three', ['big-c'])], edges });
    expect(across.record.run.error).to.include({ code: 'invalid_graph' });
    expect(across.record.run.error.message).to.match(/node 'three': its skills' instructions \(100000 bytes\) bring the run's total to 300000 bytes/);
    const within = await run({ nodes: [node('one', ['big-a']), node('two', ['big-b'])], edges: [edges[0]] });
    expect(within.record.run.status, JSON.stringify(within.record.run.error)).to.equal('completed');
  });

  it('fails the run as an invalid graph when a node would offer over 128 tools with all its skills loaded', async () => {
    const other = await newTenant('skills-many-tools');
    const ids: string[] = [];
    for (let batch = 0; batch < 127; batch += 16) {
      const names = Array.from({ length: Math.min(16, 127 - batch) }, (_, i) => `t${batch + i}`);
      ids.push(...(await Promise.all(names.map((name) => createTool(other.key, { name, kind: 'http', http: { method: 'GET', url: `https://tools.example/${name}` } })))));
    }
    const skill = await call('POST', '/v1/skills', { key: other.key, body: { name: 'many', description: 'd', instructions: 'i', tools: ids.slice(107) } });
    expect(skill.status, JSON.stringify(skill.body)).to.equal(201);
    // Its own tools, list_skills and use_skill, and the skill's 20.
    for (const [own, status] of [[107, 'failed'], [106, 'completed']] as const) {
      const agentId = await publishAgent(other.key, `tools-${own}`, { nodes: [{ id: 'main', model: 'scripted', toolRefs: ids.slice(0, own), skills: ['many'], script: [{ text: 'ok' }] }] });
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: other.key, body: { input: 'x' } });
      const record = (await call('GET', `/v1/runs/${response.frames[0]!.data.run_id}`, { key: other.key })).body;
      expect(record.run.status, JSON.stringify(record.run.error)).to.equal(status);
      if (status === 'failed') {
        expect(record.run.error).to.include({ code: 'invalid_graph' });
        expect(record.run.error.message).to.match(/node 'main' would offer 129 tools with all its skills loaded; at most 128/);
      }
    }
  });

  it('refuses, as an invalid graph, another tool named like use_skill on a node with skills or in one of its skills', async () => {
    const other = await newTenant('skills-names');
    const impostor = await createTool(other.key, { name: 'use_skill', kind: 'http', http: { method: 'GET', url: 'https://tools.example/use' } });
    await call('POST', '/v1/skills', { key: other.key, body: { name: 'plain', description: 'd', instructions: 'i' } });
    const carrier = await call('POST', '/v1/skills', { key: other.key, body: { name: 'carrier', description: 'd', instructions: 'i', tools: [impostor] } });
    expect(carrier.status).to.equal(201);
    for (const [toolRefs, skills, message] of [
      [[impostor], ['plain'], /its tool named 'use_skill' must be the built-in use_skill/],
      [[], ['carrier'], /skill 'carrier' brings a tool named 'use_skill'/],
    ] as Array<[string[], string[], RegExp]>) {
      const agentId = await publishAgent(other.key, `names-${skills[0]}`, { nodes: [{ id: 'main', model: 'scripted', toolRefs, skills, script: [{ text: 'never' }] }] });
      const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: other.key, body: { input: 'x' } });
      const record = (await call('GET', `/v1/runs/${response.frames[0]!.data.run_id}`, { key: other.key })).body;
      expect(record.run.error).to.include({ code: 'invalid_graph' });
      expect(record.run.error.message).to.match(message);
    }
  });

  it('offers list_skills and use_skill to no node without skills, and lists none to one that names the built-in', async () => {
    const listTool = await createBuiltinTool(key, 'list_skills');
    const { runId, record } = await run({
      nodes: [{ id: 'main', model: 'scripted', toolRefs: [listTool], script: [{ tool_calls: [{ tool: 'list_skills' }, { tool: 'use_skill', arguments: { name: 'refunds' } }] }, { text: 'none' }] }],
    });
    expect(record.run.status).to.equal('completed');
    expect(record.run.skills).to.deep.equal([]);
    expect(record.steps.map((s: { status: string }) => s.status)).to.deep.equal(['completed', 'failed']);
    expect(record.steps[0].result).to.deep.equal({ skills: [] });
    expect(record.steps[0].tool_id).to.equal(listTool);
    expect(record.steps[1].error).to.match(/unknown tool 'use_skill'/);
    expect((await modelRequests(runId))[0]!.tools.map((t) => t.name)).to.deep.equal(['list_skills']);
  });
});

describe('skills: what an OpenAI-compatible model is sent', () => {
  let key: string;
  let wire: WireServer;
  before(async () => {
    ({ key } = await newTenant('skills-wire'));
    await createBuiltinTool(key, 'calculator');
    await call('POST', '/v1/skills', { key, body: { name: 'refunds', description: 'Refund an order', instructions: 'REFUND: compute it with the calculator.', tools: ['calculator'] } });
    // A model that loads the skill, then calls the skill's tool, then answers.
    const answers = [
      { toolCalls: [{ id: 'call_a', name: 'use_skill', argumentFragments: ['{"name":', '"refunds"}'] }] },
      { toolCalls: [{ id: 'call_b', name: 'calculator', argumentFragments: ['{"expression":"6*7"}'] }] },
      { text: ['Refunded ', '42.'] },
    ];
    wire = await startWireServer((request) => chatCompletionStream(request, { ...answers[Math.min(wire.requests.length - 1, 2)], usage: { prompt_tokens: 10, completion_tokens: 5 } }), ALLOWED_TOOL_HOST);
    const provider = await call('POST', '/v1/providers', { key, body: { name: 'local', kind: 'openai_compatible', base_url: wire.baseURL } });
    expect(provider.status, JSON.stringify(provider.body)).to.equal(201);
  });
  after(() => wire.close());

  it('sends the instructions after use_skill, and the skill\'s tool, in the next Chat Completions request', async () => {
    const agentId = await publishAgent(key, 'wire-skilled', { nodes: [{ id: 'main', model: 'local/some-model', toolRefs: [], skills: ['refunds'] }] });
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'refund order 7' } });
    const runId: string = response.frames[0]!.data.run_id;
    const record = (await call('GET', `/v1/runs/${runId}`, { key })).body;
    expect(record.run.status, JSON.stringify(record.run.error)).to.equal('completed');
    expect(record.run.output).to.equal('Refunded 42.');
    expect(record.run.skills.map((s: { name: string; version: number }) => [s.name, s.version])).to.deep.equal([['refunds', 1]]);

    const sent = wire.requests.map((request) => request.body);
    expect(sent).to.have.length(3);
    const toolNames = (body: any) => (body.tools ?? []).map((t: any) => t.function.name);
    expect(toolNames(sent[0])).to.deep.equal(['list_skills', 'use_skill']);
    expect(JSON.stringify(sent[0].messages)).to.not.include('REFUND');
    expect(toolNames(sent[1])).to.deep.equal(['list_skills', 'use_skill', 'calculator']);
    expect(sent[1].messages.map((m: any) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'user']);
    expect(sent[1].messages[3].content).to.include('REFUND: compute it with the calculator.');
    expect(sent[2].messages.at(-1)).to.include({ role: 'tool', tool_call_id: 'call_b', content: JSON.stringify({ result: 42 }) });
  });
});
