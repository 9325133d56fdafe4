import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { openSecret, sealSecret, SecretsUnavailableError, SecretUnreadableError } from '../activities/secrets/secret-box.js';
import { newSecretsKeyEntry, parseSecretsKey, SECRETS_KEY_VARIABLE, useEmbeddedSecretsKey } from '../activities/secrets/secrets-key.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { publishAgent } from './support/agents.js';
import { ALLOWED_TOOL_HOST, testPlatform } from './support/global.js';
import { stream } from './support/sse.js';
import { chatCompletionStream } from './support/wire-servers/openai.js';
import { startWireServer, type ReceivedRequest, type WireReply, type WireServer } from './support/wire-servers/sse-server.js';

// Long enough that its last four characters are shown; distinct enough to find anywhere it leaks.
const KEY = 'sk-live-providers-test-0123456789abcdefWXYZ';
const HEADER_VALUE = 'org-secret-header-value-42';

/** Everything the process writes to stdout and stderr (console included) while `work` runs, passed through. */
async function capturingOutput<T>(work: () => Promise<T>): Promise<{ result: T; output: string }> {
  const chunks: string[] = [];
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tap = (original: typeof process.stdout.write) =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString());
      return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof process.stdout.write;
  process.stdout.write = tap(originals.out);
  process.stderr.write = tap(originals.err);
  try {
    return { result: await work(), output: chunks.join('') };
  } finally {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  }
}

/** Runs `work` with SECRETS_KEY set to `value` (unset when undefined) in this process, then puts it back. */
async function withSecretsKey<T>(value: string | undefined, work: () => Promise<T>): Promise<T> {
  const saved = process.env[SECRETS_KEY_VARIABLE];
  if (value === undefined) delete process.env[SECRETS_KEY_VARIABLE];
  else process.env[SECRETS_KEY_VARIABLE] = value;
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env[SECRETS_KEY_VARIABLE];
    else process.env[SECRETS_KEY_VARIABLE] = saved;
  }
}

async function storedRow(tenantId: string, name: string) {
  return testPlatform().db.selectFrom('provider_connections').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirstOrThrow();
}

/** A local provider speaking the OpenAI wire format on the host the tests' outbound guard allows. */
async function openAiWireServer(answer: (request: ReceivedRequest) => WireReply): Promise<WireServer> {
  return startWireServer(answer, ALLOWED_TOOL_HOST);
}

const modelsList = (): WireReply => ({ kind: 'error', status: 200, body: { object: 'list', data: [{ id: 'some-model', object: 'model' }, { id: 'other-model', object: 'model' }] } });

describe('providers: the secret box and SECRETS_KEY', () => {
  const keyA = newSecretsKeyEntry('a');
  const keyB = newSecretsKeyEntry('b');

  it('seals as a dir/A256GCM JWE naming its key, and keeps old secrets readable after a rotation', async () => {
    const sealed = await sealSecret(KEY, parseSecretsKey(keyA));
    expect(sealed.split('.')).to.have.length(5);
    expect(sealed.split('.')[1]).to.equal(''); // `dir`: no encrypted key
    expect(decodeProtectedHeader(sealed)).to.deep.equal({ alg: 'dir', enc: 'A256GCM', kid: 'a' });
    expect(sealed).to.not.include(KEY);
    expect(await sealSecret(KEY, parseSecretsKey(keyA))).to.not.equal(sealed); // a fresh IV every time

    const rotated = parseSecretsKey(`${keyB}, ${keyA}`);
    expect(await openSecret(sealed, rotated)).to.equal(KEY);
    const resealed = await sealSecret(KEY, rotated);
    expect(decodeProtectedHeader(resealed).kid).to.equal('b');
    expect(await openSecret(resealed, rotated)).to.equal(KEY);

    const error = await openSecret(sealed, parseSecretsKey(keyB)).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SecretUnreadableError);
    expect((error as Error).message).to.include("sealed with key 'a', which SECRETS_KEY no longer holds");
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(await openSecret(tampered, rotated).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
    expect(await openSecret('not-a-jwe', rotated).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
  });

  it('refuses a malformed SECRETS_KEY with a message that names the entry and never echoes a key', () => {
    const short = 'k1:' + Buffer.alloc(16, 7).toString('base64url');
    const cases: Array<[string, string]> = [
      ['nokid', "entry 1 must be 'kid:key'"],
      [short, "entry 1 (kid 'k1') must be 32 random bytes in base64url"],
      [`${keyA},${keyA}`, "entry 2 repeats the kid 'a'"],
      [`${keyA},bad kid:${keyA.slice(2)}`, "entry 2 must be 'kid:key'"],
      [`${keyA},`, "entry 2 must be 'kid:key'"],
      ['k1:not*base64', "entry 1 (kid 'k1') must be 32 random bytes"],
    ];
    for (const [value, message] of cases) {
      expect(() => parseSecretsKey(value), value).to.throw(Error, message);
      try {
        parseSecretsKey(value);
      } catch (err) {
        expect((err as Error).message).to.not.include(keyA.slice(2));
      }
    }
    expect(parseSecretsKey(`${keyB},${keyA}`).currentKid).to.equal('b');
  });

  it('without SECRETS_KEY, neither seals nor opens', async () => {
    await withSecretsKey(undefined, async () => {
      expect(await sealSecret('x').catch((e: unknown) => e)).to.be.instanceOf(SecretsUnavailableError);
      expect(await openSecret('a.b.c.d.e').catch((e: unknown) => e)).to.be.instanceOf(SecretsUnavailableError);
    });
  });

  it('the embedded default makes its key once in the data directory, owner-readable only, and uses it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'providers-key-'));
    try {
      const first: NodeJS.ProcessEnv = {};
      expect(useEmbeddedSecretsKey(dataDir, first)).to.equal('generated');
      const file = path.join(dataDir, 'secrets-key');
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(first.SECRETS_KEY).to.equal(fs.readFileSync(file, 'utf8').trim());
      expect(parseSecretsKey(first.SECRETS_KEY!).currentKid).to.equal('local');

      const second: NodeJS.ProcessEnv = {};
      expect(useEmbeddedSecretsKey(dataDir, second)).to.equal('file');
      expect(second.SECRETS_KEY).to.equal(first.SECRETS_KEY);
      const configured: NodeJS.ProcessEnv = { SECRETS_KEY: keyA };
      expect(useEmbeddedSecretsKey(dataDir, configured)).to.equal('environment');
      expect(configured.SECRETS_KEY).to.equal(keyA);

      fs.writeFileSync(file, 'garbage');
      expect(() => useEmbeddedSecretsKey(dataDir, {})).to.throw(Error, `${file}: SECRETS_KEY: entry 1`);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('providers: the API', () => {
  let tenant: TestTenant;
  let other: TestTenant;
  let wire: WireServer;
  before(async () => {
    tenant = await newTenant('providers');
    other = await newTenant('providers-other');
    wire = await openAiWireServer(modelsList);
  });
  after(() => wire.close());

  const body = () => ({
    name: 'myprov',
    kind: 'openai_compatible',
    base_url: wire.baseURL,
    api_key: KEY,
    headers: { 'X-Org': HEADER_VALUE },
    prices: { 'some-model': { prompt: '3', completion: '7' } },
  });

  it('creates, lists, reads, changes and deletes a connection, never answering its key or header values', async () => {
    const bodies: string[] = [];
    const keep = <T extends { body: unknown }>(response: T) => (bodies.push(JSON.stringify(response.body)), response);

    const created = keep(await call('POST', '/v1/providers', { key: tenant.key, body: body() }));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.created).to.equal(true);
    expect(created.body.provider).to.deep.include({
      name: 'myprov',
      kind: 'openai_compatible',
      base_url: wire.baseURL,
      has_api_key: true,
      api_key_last4: 'WXYZ',
      headers: { 'X-Org': '[redacted]' },
      prices: { 'some-model': { prompt: '3', completion: '7' } },
    });
    expect(created.body.provider.id).to.match(/^prv_/);

    // The spec's upsert by name: the existing connection, unchanged.
    const again = keep(await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), api_key: 'sk-another-key-entirely-000000' } }));
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({ provider: created.body.provider, created: false });

    const list = keep(await call('GET', '/v1/providers', { key: tenant.standardKey }));
    expect(list.status).to.equal(200);
    expect(list.body.providers.map((p: { name: string }) => p.name)).to.deep.equal(['myprov']);
    const got = keep(await call('GET', '/v1/providers/myprov', { key: tenant.standardKey }));
    expect(got.body.provider).to.deep.equal(created.body.provider);

    const tested = keep(await call('POST', '/v1/providers/myprov/test', { key: tenant.standardKey }));
    expect(tested.status).to.equal(200);
    expect(tested.body).to.deep.include({ ok: true, status: 200, models: ['some-model', 'other-model'], error: null });
    const modelsCall = wire.requests.at(-1)!;
    expect(modelsCall).to.deep.include({ method: 'GET', path: '/v1/models' });
    expect(modelsCall.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(modelsCall.headers['x-org']).to.equal(HEADER_VALUE);

    const patched = keep(await call('PATCH', '/v1/providers/myprov', { key: tenant.key, body: { name: 'renamed', api_key: 'short-key', headers: null, prices: { '*': { prompt: '0.5', completion: '1' } } } }));
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.provider).to.deep.include({ name: 'renamed', has_api_key: true, api_key_last4: null, headers: {}, prices: { '*': { prompt: '0.5', completion: '1' } } });
    expect(patched.body.provider.id).to.equal(created.body.provider.id);
    expect((await storedRow(tenant.tenantId, 'renamed')).headers).to.equal(null);
    expect((await call('GET', '/v1/providers/myprov', { key: tenant.key })).status).to.equal(404);

    const keyless = keep(await call('PATCH', '/v1/providers/renamed', { key: tenant.key, body: { api_key: null } }));
    expect(keyless.body.provider).to.deep.include({ has_api_key: false, api_key_last4: null });

    const deleted = await call('DELETE', '/v1/providers/renamed', { key: tenant.key });
    expect(deleted.body).to.deep.equal({ deleted: true, id: created.body.provider.id });
    expect((await call('GET', '/v1/providers/renamed', { key: tenant.key })).status).to.equal(404);

    for (const text of bodies) {
      expect(text).to.not.include(KEY);
      expect(text).to.not.include(HEADER_VALUE);
      expect(text).to.not.include('short-key');
    }
  });

  it('stores the key and the headers as JWE under the first key of SECRETS_KEY, and reads them back after a rotation', async () => {
    await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'sealed' } });
    const row = await storedRow(tenant.tenantId, 'sealed');
    const currentKid = parseSecretsKey(process.env.SECRETS_KEY!).currentKid;
    for (const sealed of [row.api_key!, row.headers!]) {
      expect(decodeProtectedHeader(sealed)).to.deep.equal({ alg: 'dir', enc: 'A256GCM', kid: currentKid });
      expect(sealed).to.not.include(KEY);
      expect(sealed).to.not.include(HEADER_VALUE);
    }
    expect(await openSecret(row.api_key!)).to.equal(KEY);
    expect(JSON.parse(await openSecret(row.headers!))).to.deep.equal({ 'X-Org': HEADER_VALUE });
    expect(row).to.deep.include({ api_key_last4: 'WXYZ', header_names: ['X-Org'] });

    // A new key first, the old one kept: new secrets use the new key, old ones still open (API in this process).
    const rotatedKey = newSecretsKeyEntry('rotated');
    await withSecretsKey(`${rotatedKey},${process.env.SECRETS_KEY}`, async () => {
      const created = await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'after-rotation' } });
      expect(created.status).to.equal(201);
      expect(decodeProtectedHeader((await storedRow(tenant.tenantId, 'after-rotation')).api_key!).kid).to.equal('rotated');
      const old = await call('POST', '/v1/providers/sealed/test', { key: tenant.key });
      expect(old.body).to.include({ ok: true, status: 200 });
      expect(wire.requests.at(-1)!.headers.authorization).to.equal(`Bearer ${KEY}`);
    });
    // Without the rotated key, what it sealed cannot be read: the test call says so.
    const lost = await call('POST', '/v1/providers/after-rotation/test', { key: tenant.key });
    expect(lost.status).to.equal(503);
    expect(lost.body.error.message).to.include("sealed with key 'rotated', which SECRETS_KEY no longer holds");
    await call('DELETE', '/v1/providers/after-rotation', { key: tenant.key });
  });

  it('without SECRETS_KEY refuses to store a key or headers (503 naming it), and stores a keyless connection', async () => {
    const sealedBefore = (await storedRow(tenant.tenantId, 'sealed')).api_key;
    await withSecretsKey(undefined, async () => {
      for (const refused of [body(), { ...body(), api_key: undefined }]) {
        const response = await call('POST', '/v1/providers', { key: tenant.key, body: { ...refused, name: 'nokey' } });
        expect(response.status).to.equal(503);
        expect(response.body.error).to.include({ code: 'unavailable' });
        expect(response.body.error.message).to.include('SECRETS_KEY is not set on this server');
      }
      const patch = await call('PATCH', '/v1/providers/sealed', { key: tenant.key, body: { api_key: 'sk-new-key-while-unset-0000' } });
      expect(patch.status).to.equal(503);
      const keyless = await call('POST', '/v1/providers', { key: tenant.key, body: { name: 'nokey', kind: 'openai_compatible', base_url: wire.baseURL } });
      expect(keyless.status).to.equal(201);
      expect(keyless.body.provider).to.include({ has_api_key: false, api_key_last4: null });
    });
    expect((await call('GET', '/v1/providers/nokey', { key: tenant.key })).status).to.equal(200);
    expect((await storedRow(tenant.tenantId, 'sealed')).api_key).to.equal(sealedBefore); // the refused PATCH changed nothing
  });

  it('takes writes from management keys only, and answers 404 for another workspace\'s connection', async () => {
    await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'guarded' } });
    const standard = tenant.standardKey;
    expect((await call('POST', '/v1/providers', { key: standard, body: { ...body(), name: 'by-standard' } })).status).to.equal(403);
    expect((await call('PATCH', '/v1/providers/guarded', { key: standard, body: { base_url: wire.baseURL } })).status).to.equal(403);
    expect((await call('DELETE', '/v1/providers/guarded', { key: standard })).status).to.equal(403);
    expect((await call('GET', '/v1/providers/guarded', { key: standard })).status).to.equal(200);

    for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test']] as const) {
      const response = await call(method, `/v1/providers/guarded${suffix}`, { key: other.key, body: method === 'PATCH' ? { base_url: wire.baseURL } : undefined });
      expect(response.status, `${method} ${suffix}`).to.equal(404);
    }
    expect((await call('GET', '/v1/providers', { key: other.key })).body.providers).to.deep.equal([]);
    expect((await call('GET', '/v1/providers/guarded', { key: tenant.key })).body.provider.base_url).to.equal(wire.baseURL);
  });

  it('answers 400 for bad input and 409 for a rename onto a taken name, changing nothing', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...body(), name: 'scripted' }, 'body.name'],
      [{ ...body(), name: 'My Provider' }, 'body.name'],
      [{ ...body(), name: 'x/y' }, 'body.name'],
      [{ name: 'p1', kind: 'openai' }, 'body.api_key'],
      [{ name: 'p1', kind: 'anthropic', base_url: wire.baseURL }, 'body.api_key'],
      [{ name: 'p1', kind: 'openai_compatible' }, 'body.base_url'],
      [{ name: 'p1', kind: 'mistral', api_key: KEY }, 'body.kind'],
      [{ ...body(), name: 'p1', base_url: 'ftp://example.com/v1' }, 'body.base_url'],
      [{ ...body(), name: 'p1', base_url: 'https://user:pw@example.com/v1' }, 'body.base_url'],
      [{ ...body(), name: 'p1', prices: { 'some-model': { prompt: 3, completion: '7' } } }, 'body.prices'],
      [{ ...body(), name: 'p1', prices: { 'some-model': { prompt: '3' } } }, 'body.prices'],
      [{ ...body(), name: 'p1', headers: { 'Bad Header': 'x' } }, 'body.headers'],
      [{ ...body(), name: 'p1', api_key: 'has space' }, 'body.api_key'],
      [{ ...body(), name: 'p1', extra: true }, 'body'],
    ];
    for (const [request, field] of bad) {
      const response = await call('POST', '/v1/providers', { key: tenant.key, body: request });
      expect(response.status, JSON.stringify(request)).to.equal(400);
      expect(response.body.error.code).to.equal('invalid_request');
      expect(JSON.stringify(response.body.error), JSON.stringify(request)).to.include(field);
      expect(JSON.stringify(response.body)).to.not.include(KEY);
    }
    expect((await call('GET', '/v1/providers/p1', { key: tenant.key })).status).to.equal(404);

    await call('POST', '/v1/providers', { key: tenant.key, body: { name: 'oa', kind: 'openai', api_key: KEY } });
    const oa = await call('GET', '/v1/providers/oa', { key: tenant.key });
    expect(oa.body.provider.base_url).to.equal('https://api.openai.com/v1');
    expect((await call('PATCH', '/v1/providers/oa', { key: tenant.key, body: {} })).status).to.equal(400);
    const dropKey = await call('PATCH', '/v1/providers/oa', { key: tenant.key, body: { api_key: null } });
    expect(dropKey.status).to.equal(400);
    expect(dropKey.body.error.message).to.include("body.api_key is required for kind 'openai'");
    const taken = await call('PATCH', '/v1/providers/oa', { key: tenant.key, body: { name: 'guarded' } });
    expect(taken.status).to.equal(409);
    // A new kind moves a connection on the old kind's default address to the new kind's.
    const anthropic = await call('PATCH', '/v1/providers/oa', { key: tenant.key, body: { kind: 'anthropic' } });
    expect(anthropic.body.provider).to.include({ kind: 'anthropic', base_url: 'https://api.anthropic.com/v1', name: 'oa' });
  });

  it('reports the provider\'s own error from the test call, without the key', async () => {
    const refusing = await openAiWireServer(() => ({ kind: 'error', status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error' } } }));
    try {
      await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'refusing', base_url: refusing.baseURL } });
      const response = await call('POST', '/v1/providers/refusing/test', { key: tenant.key });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.include({ ok: false, status: 401, models: [], error: 'Incorrect API key provided: [api_key].' });
      expect(JSON.stringify(response.body)).to.not.include(KEY);
    } finally {
      await refusing.close();
    }
  });

  it('applies the outbound guard to a workspace\'s base URL: loopback is refused unless allow-listed', async () => {
    const loopback = await startWireServer(modelsList); // 127.0.0.1, which TOOL_HTTP_ALLOW_HOSTS does not list
    try {
      await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'loopback', base_url: loopback.baseURL } });
      const response = await call('POST', '/v1/providers/loopback/test', { key: tenant.key });
      expect(response.body).to.include({ ok: false, status: null });
      expect(response.body.error).to.match(/refused/);
      expect(loopback.requests).to.have.length(0);
    } finally {
      await loopback.close();
    }
  });
});

describe('providers: runs', () => {
  let tenant: TestTenant;
  let wire: WireServer;
  before(async () => {
    tenant = await newTenant('providers-runs');
    wire = await openAiWireServer((request) => {
      if (request.headers.authorization !== `Bearer ${KEY}`) {
        return { kind: 'error', status: 401, body: { error: { message: `Incorrect API key provided: ${request.headers.authorization?.slice(7)}` } } };
      }
      return chatCompletionStream(request, { text: ['Served by ', 'the workspace.'], usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    });
  });
  after(() => wire.close());

  it('serves `myprov/some-model` from the workspace\'s connection, with its key, headers and prices, leaking neither', async () => {
    const created = await call('POST', '/v1/providers', {
      key: tenant.key,
      body: { name: 'myprov', kind: 'openai_compatible', base_url: wire.baseURL, api_key: KEY, headers: { 'X-Org': HEADER_VALUE }, prices: { 'some-model': { prompt: '3', completion: '7' } } },
    });
    expect(created.status).to.equal(201);
    const agentId = await publishAgent(tenant.key, 'byo-model', { nodes: [{ id: 'main', model: 'myprov/some-model', system: 'Be brief.', toolRefs: [] }] });

    const { result, output } = await capturingOutput(async () => {
      const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'Who serves you?' } });
      const runId = run.frames[0]!.data.run_id;
      const record = await call('GET', `/v1/runs/${runId}`, { key: tenant.key });
      const replay = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key, until: (frame) => frame.event.startsWith('run.') && frame.event !== 'run.created' && frame.event !== 'run.started' });
      return { run, record, replay };
    });
    const { run, record, replay } = result;
    expect(run.frames.at(-1)!.event, JSON.stringify(run.frames.at(-1))).to.equal('run.completed');
    expect(record.body.run).to.include({ status: 'completed', output: 'Served by the workspace.', model: 'myprov/some-model' });
    // 1000 × $3 + 500 × $7 per million tokens: the connection's prices (no built-in price knows this model).
    expect(record.body.run.usage).to.include({ prompt_tokens: 1000, completion_tokens: 500, cost_usd: '0.0065' });

    const request = wire.requests.find((r) => r.path === '/v1/chat/completions')!;
    expect(request.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(request.headers['x-org']).to.equal(HEADER_VALUE);
    expect(request.body.model).to.equal('some-model');
    expect(request.body.stream_options).to.deep.equal({ include_usage: true });

    for (const [where, text] of [
      ['the run stream', JSON.stringify(run.frames)],
      ['the run record', JSON.stringify(record.body)],
      ['the stored events', JSON.stringify(replay.frames)],
      ['the process output', output],
    ]) {
      expect(text, where).to.not.include(KEY);
      expect(text, where).to.not.include(HEADER_VALUE);
    }
    const events = await testPlatform().db.selectFrom('run_events').select('data').where('run_id', '=', record.body.run.id).execute();
    expect(JSON.stringify(events)).to.not.include(KEY);
    const stored = await testPlatform().db.selectFrom('runs').selectAll().where('id', '=', record.body.run.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).to.not.include(KEY);
  });

  it('lets a connection named `openai` override the server\'s OpenAI for this workspace, at built-in prices when it sets none', async () => {
    await call('POST', '/v1/providers', { key: tenant.key, body: { name: 'openai', kind: 'openai', base_url: wire.baseURL, api_key: KEY } });
    const agentId = await publishAgent(tenant.key, 'own-openai', { nodes: [{ id: 'main', model: 'openai/gpt-4.1-mini', toolRefs: [] }] });
    const before = wire.requests.length;
    const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hi' } });
    expect(run.frames.at(-1)!.event).to.equal('run.completed');
    const request = wire.requests.slice(before).find((r) => r.path === '/v1/chat/completions')!;
    expect(request.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(request.body.model).to.equal('gpt-4.1-mini');
    // 1000 × $0.4 + 500 × $1.6 per million: the built-in table.
    expect(run.frames.at(-1)!.data.usage.cost_usd).to.equal('0.0012');

    // Another workspace without the connection still gets the server's own OpenAI (no key here: a model error).
    const other = await newTenant('providers-runs-other');
    const otherAgent = await publishAgent(other.key, 'env-openai', { nodes: [{ id: 'main', model: 'openai/gpt-4.1-mini', toolRefs: [] }] });
    const otherBefore = wire.requests.length;
    const otherRun = await stream('POST', `/v1/agents/${otherAgent}/runs`, { key: other.key, body: { input: 'hi' } });
    expect(wire.requests.length).to.equal(otherBefore);
    if (!process.env.OPENAI_API_KEY) {
      expect(otherRun.frames.at(-1)!.event).to.equal('run.failed');
      expect(otherRun.frames.at(-1)!.data.error.message).to.include('OPENAI_API_KEY is not set');
    }
  });

  it('fails the run with the provider\'s error when it refuses the key, without the key in the error', async () => {
    const wrongKey = 'sk-wrong-key-that-the-provider-refuses-9876';
    await call('POST', '/v1/providers', { key: tenant.key, body: { name: 'wrongkey', kind: 'openai_compatible', base_url: wire.baseURL, api_key: wrongKey } });
    const agentId = await publishAgent(tenant.key, 'wrong-key', { nodes: [{ id: 'main', model: 'wrongkey/some-model', toolRefs: [] }] });
    const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hi' } });
    const end = run.frames.at(-1)!;
    expect(end.event).to.equal('run.failed');
    expect(end.data.error.message).to.include('Incorrect API key provided: [api_key]');
    expect(JSON.stringify(run.frames)).to.not.include(wrongKey);
  });
});

describe('providers: the outbound guard in runs', () => {
  it('fails a run whose connection points at a refused address at once, as a model error, sending nothing', async () => {
    const tenant = await newTenant('providers-guard');
    const loopback = await startWireServer((request) => chatCompletionStream(request, { text: ['never'] })); // 127.0.0.1: not allow-listed
    try {
      await call('POST', '/v1/providers', { key: tenant.key, body: { name: 'inside', kind: 'openai_compatible', base_url: loopback.baseURL, api_key: KEY } });
      const agentId = await publishAgent(tenant.key, 'inside', { nodes: [{ id: 'main', model: 'inside/some-model', toolRefs: [] }] });
      const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hi' } });
      const end = run.frames.at(-1)!;
      expect(end.event).to.equal('run.failed');
      expect(end.data.error.code).to.equal('model_error');
      expect(end.data.error.message).to.match(/base URL is refused/);
      expect(run.frames.filter((frame) => frame.event === 'attempt.reset')).to.have.length(0); // not retried
      expect(loopback.requests).to.have.length(0);
    } finally {
      await loopback.close();
    }
  });
});

describe('providers: decision and judge models', () => {
  let tenant: TestTenant;
  let other: TestTenant;
  let wire: WireServer;
  before(async () => {
    tenant = await newTenant('providers-judges');
    other = await newTenant('providers-judges-other');
    wire = await openAiWireServer((request) => chatCompletionStream(request, { text: ['{"rude": 0.9}'], usage: { prompt_tokens: 100, completion_tokens: 10 } }));
    await call('POST', '/v1/providers', {
      key: tenant.key,
      body: { name: 'judgeprov', kind: 'openai_compatible', base_url: wire.baseURL, api_key: KEY, prices: { '*': { prompt: '10', completion: '100' } } },
    });
  });
  after(() => wire.close());

  it('accepts a connection\'s name where model ids are checked when saved, only in its own workspace', async () => {
    const guardrail = { name: 'no-rudeness', kind: 'semantic', target: 'input', action: 'block', config: { model: 'judgeprov/some-model', questions: { rude: 'The text is rude.' } } };
    const refused = await call('POST', '/v1/guardrails', { key: other.key, body: guardrail });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.message).to.include("whose provider is not one of openai, anthropic, ollama, scripted or the workspace's provider connections");
    expect((await call('POST', '/v1/guardrails', { key: tenant.key, body: guardrail })).status).to.equal(201);

    await publishAgent(tenant.key, 'judged', { nodes: [{ id: 'main', model: 'scripted', script: [{ text: 'ok' }], toolRefs: [] }] });
    await publishAgent(other.key, 'judged', { nodes: [{ id: 'main', model: 'scripted', script: [{ text: 'ok' }], toolRefs: [] }] });
    const suite = { agent: 'judged', name: 'judged', scorers: [{ type: 'llm_judge', model: 'judgeprov/some-model', rubric: 'Is {{output}} polite?' }] };
    expect((await call('POST', '/v1/evals/suites', { key: other.key, body: suite })).status).to.equal(400);
    expect((await call('POST', '/v1/evals/suites', { key: tenant.key, body: suite })).status).to.equal(201);
  });

  it('runs a semantic guardrail\'s decision model through the connection, and prices it at the connection\'s prices', async () => {
    const before = wire.requests.length;
    const run = await stream('POST', '/v1/agents/judged/runs', { key: tenant.key, body: { input: 'You are all useless.' } });
    const end = run.frames.at(-1)!;
    expect(end.event, JSON.stringify(end)).to.equal('run.failed');
    expect(end.data.error.code).to.equal('guardrail_blocked');
    const decision = wire.requests.slice(before).find((r) => r.path === '/v1/chat/completions')!;
    expect(decision.headers.authorization).to.equal(`Bearer ${KEY}`);
    // 100 × $10 + 10 × $100 per million tokens.
    expect(end.data.usage).to.include({ prompt_tokens: 100, completion_tokens: 10, cost_usd: '0.002' });
    expect(JSON.stringify(run.frames)).to.not.include(KEY);
  });
});
