import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { CompactEncrypt, decodeProtectedHeader } from 'jose';
import { isRetryableModelError, ProviderCallError } from '../activities/models/errors.js';
import { costUsd, priceFor } from '../activities/models/prices.js';
import { streamModelTurn } from '../activities/models/provider.js';
import type { ProviderConnection } from '../activities/models/provider-connection.js';
import { modelSettingsFromEnv } from '../activities/models/settings.js';
import { openSecret, sealSecret, SecretsUnavailableError, SecretUnreadableError } from '../activities/secrets/secret-box.js';
import { secretContext } from '../db/provider-connections.js';
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

  const CTX = 'provider_connections/ten_1/prv_1/api_key';

  it('seals as a dir/A256GCM JWE naming its key, and keeps old secrets readable after a rotation', async () => {
    const sealed = await sealSecret(KEY, CTX, parseSecretsKey(keyA));
    expect(sealed.split('.')).to.have.length(5);
    expect(sealed.split('.')[1]).to.equal(''); // `dir`: no encrypted key
    expect(decodeProtectedHeader(sealed)).to.deep.equal({ alg: 'dir', enc: 'A256GCM', kid: 'a', ctx: CTX });
    expect(sealed).to.not.include(KEY);
    expect(await sealSecret(KEY, CTX, parseSecretsKey(keyA))).to.not.equal(sealed); // a fresh IV every time

    const rotated = parseSecretsKey(`${keyB}, ${keyA}`);
    expect(await openSecret(sealed, CTX, rotated)).to.equal(KEY);
    const resealed = await sealSecret(KEY, CTX, rotated);
    expect(decodeProtectedHeader(resealed).kid).to.equal('b');
    expect(await openSecret(resealed, CTX, rotated)).to.equal(KEY);

    const error = await openSecret(sealed, CTX, parseSecretsKey(keyB)).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SecretUnreadableError);
    expect((error as Error).message).to.include("sealed with key 'a', which SECRETS_KEY no longer holds");
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(await openSecret(tampered, CTX, rotated).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
    expect(await openSecret('not-a-jwe', CTX, rotated).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
  });

  it('opens a secret only where it was sealed for: another row, column or workspace reads it as unreadable', async () => {
    const ring = parseSecretsKey(keyA);
    const sealed = await sealSecret(KEY, CTX, ring);
    for (const elsewhere of ['provider_connections/ten_1/prv_2/api_key', 'provider_connections/ten_1/prv_1/headers', 'provider_connections/ten_2/prv_1/api_key']) {
      const error = await openSecret(sealed, elsewhere, ring).catch((e: unknown) => e);
      expect(error, elsewhere).to.be.instanceOf(SecretUnreadableError);
      expect((error as Error).message).to.not.include(KEY);
    }
    // A header rewritten to name the other place fails authentication: ctx is part of what GCM protects.
    const [, , iv, ciphertext, tag] = sealed.split('.');
    const forgedHeader = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: 'a', ctx: 'provider_connections/ten_2/prv_9/api_key' })).toString('base64url');
    const forged = [forgedHeader, '', iv, ciphertext, tag].join('.');
    expect(await openSecret(forged, 'provider_connections/ten_2/prv_9/api_key', ring).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
    // A JWE without ctx (as sealed before contexts existed) opens nowhere.
    const contextless = await new CompactEncrypt(new TextEncoder().encode(KEY)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'a' }).encrypt(ring.keys.get('a')!);
    expect(await openSecret(contextless, CTX, ring).catch((e: unknown) => e)).to.be.instanceOf(SecretUnreadableError);
  });

  it('refuses a malformed SECRETS_KEY with a message that names the entry and never echoes a key', () => {
    const short = 'k1:' + Buffer.alloc(16, 7).toString('base64url');
    const keyMaterial = keyA.slice(2);
    const cases: Array<[string, string]> = [
      ['nokid', "entry 1 must be 'kid:key'"],
      [short, 'entry 1 must be 32 random bytes in base64url'],
      [`${keyA},${keyA}`, 'entry 2 repeats the kid of entry 1'],
      [`${keyA},bad kid:${keyMaterial}`, "entry 2 must be 'kid:key'"],
      [`${keyA},`, "entry 2 must be 'kid:key'"],
      ['k1:not*base64', 'entry 1 must be 32 random bytes'],
      // Key and kid swapped: the "kid" is the key, and must not be printed as a kid either.
      [`${keyMaterial}:a`, 'entry 1 must be 32 random bytes'],
      [`${keyMaterial}:${keyMaterial},${keyMaterial}:${keyMaterial}`, 'entry 2 repeats the kid of entry 1'],
    ];
    for (const [value, message] of cases) {
      expect(() => parseSecretsKey(value), value).to.throw(Error, message);
      try {
        parseSecretsKey(value);
      } catch (err) {
        expect((err as Error).message).to.not.include(keyMaterial);
        expect((err as Error).message).to.not.include(keyMaterial.slice(0, 8));
      }
    }
    expect(parseSecretsKey(`${keyB},${keyA}`).currentKid).to.equal('b');
  });

  it('without SECRETS_KEY, neither seals nor opens', async () => {
    await withSecretsKey(undefined, async () => {
      expect(await sealSecret('x', CTX).catch((e: unknown) => e)).to.be.instanceOf(SecretsUnavailableError);
      expect(await openSecret('a.b.c.d.e', CTX).catch((e: unknown) => e)).to.be.instanceOf(SecretsUnavailableError);
    });
  });

  it('the embedded default makes its key once in the data directory, owner-readable only, and uses it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'providers-key-'));
    try {
      const warnings: string[] = [];
      const warn = (message: string) => warnings.push(message);
      const first: NodeJS.ProcessEnv = {};
      expect(useEmbeddedSecretsKey(dataDir, first, warn)).to.equal('generated');
      const file = path.join(dataDir, 'secrets-key');
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(fs.readdirSync(dataDir)).to.deep.equal(['secrets-key']); // the temporary file it was written as is gone
      expect(warnings).to.deep.equal([]);
      // A start that finds the key file open to others says so (and still uses it).
      fs.chmodSync(file, 0o644);
      const loose: NodeJS.ProcessEnv = {};
      expect(useEmbeddedSecretsKey(dataDir, loose, warn)).to.equal('file');
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include(`${file} can be read by others than its owner (mode 0644)`);
      expect(warnings[0]).to.not.include(loose.SECRETS_KEY!.slice(6));
      fs.chmodSync(file, 0o600);
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

    const tested = keep(await call('POST', '/v1/providers/myprov/test', { key: tenant.key }));
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
    for (const column of ['api_key', 'headers'] as const) {
      const sealed = row[column]!;
      expect(decodeProtectedHeader(sealed)).to.deep.equal({ alg: 'dir', enc: 'A256GCM', kid: currentKid, ctx: `provider_connections/${tenant.tenantId}/${row.id}/${column}` });
      expect(sealed).to.not.include(KEY);
      expect(sealed).to.not.include(HEADER_VALUE);
    }
    expect(await openSecret(row.api_key!, secretContext(tenant.tenantId, row.id, 'api_key'))).to.equal(KEY);
    expect(JSON.parse(await openSecret(row.headers!, secretContext(tenant.tenantId, row.id, 'headers')))).to.deep.equal({ 'X-Org': HEADER_VALUE });
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
      // An existing name is answered as it is, before anything would be sealed.
      const existing = await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'sealed' } });
      expect(existing.status, JSON.stringify(existing.body)).to.equal(200);
      expect(existing.body).to.deep.include({ created: false });
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
    // The test call makes an outbound request on demand: management keys only too.
    const before = wire.requests.length;
    expect((await call('POST', '/v1/providers/guarded/test', { key: standard })).status).to.equal(403);
    expect(wire.requests.length).to.equal(before);
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
      // Parses, but reaches nothing: every model call would fail.
      [{ ...body(), name: 'p1', base_url: 'http://127.0.0.1:0/v1' }, 'body.base_url'],
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
    // A new kind moves a connection on the old kind's default address to the new kind's (with its key given again).
    const anthropic = await call('PATCH', '/v1/providers/oa', { key: tenant.key, body: { kind: 'anthropic', api_key: KEY } });
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

  it('never sends stored secrets to a new destination: a PATCH of the kind or the base URL\'s origin must give them again', async () => {
    const attacker = await openAiWireServer(modelsList); // another origin: another port
    try {
      await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'moving' } });
      const sealedBefore = await storedRow(tenant.tenantId, 'moving');
      const refused: Array<[Record<string, unknown>, string[]]> = [
        [{ base_url: attacker.baseURL }, ['body.api_key', 'body.headers']],
        [{ base_url: attacker.baseURL, api_key: 'sk-the-callers-own-key-000000' }, ['body.headers']],
        [{ base_url: attacker.baseURL, headers: { 'X-Other': 'x' } }, ['body.api_key']],
        [{ base_url: wire.baseURL.replace('http://', 'https://') }, ['body.api_key', 'body.headers']], // the scheme is part of the origin
        [{ kind: 'openai' }, ['body.api_key', 'body.headers']],
      ];
      for (const [change, fields] of refused) {
        const response = await call('PATCH', '/v1/providers/moving', { key: tenant.key, body: change });
        expect(response.status, JSON.stringify(change)).to.equal(400);
        expect(response.body.error.code).to.equal('invalid_request');
        expect(response.body.error.fields.map((f: { field: string }) => f.field), JSON.stringify(change)).to.deep.equal(fields);
      }
      expect(await storedRow(tenant.tenantId, 'moving')).to.deep.equal(sealedBefore); // nothing changed
      expect(attacker.requests).to.have.length(0);

      // The same origin on another path keeps them; so does a change that gives them again (or drops them).
      const samePath = await call('PATCH', '/v1/providers/moving', { key: tenant.key, body: { base_url: `${wire.baseURL}/` } });
      expect(samePath.status, JSON.stringify(samePath.body)).to.equal(200);
      expect(samePath.body.provider).to.include({ has_api_key: true, api_key_last4: 'WXYZ' });
      const moved = await call('PATCH', '/v1/providers/moving', { key: tenant.key, body: { base_url: attacker.baseURL, api_key: 'sk-the-callers-own-key-000000', headers: null } });
      expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
      await call('POST', '/v1/providers/moving/test', { key: tenant.key });
      expect(attacker.requests).to.have.length(1);
      expect(attacker.requests[0]!.headers.authorization).to.equal('Bearer sk-the-callers-own-key-000000');
      expect(attacker.requests[0]!.headers).to.not.have.property('x-org');
      expect(JSON.stringify(attacker.requests)).to.not.include(KEY);
      // A connection without secrets moves freely: there is nothing to send.
      expect((await call('PATCH', '/v1/providers/moving', { key: tenant.key, body: { api_key: null } })).status).to.equal(200);
      expect((await call('PATCH', '/v1/providers/moving', { key: tenant.key, body: { base_url: wire.baseURL } })).status).to.equal(200);
    } finally {
      await attacker.close();
    }
  });

  it('reads a ciphertext only in the row it was sealed for: copied into another row, it is unreadable and nothing is sent', async () => {
    await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'victim' } });
    await call('POST', '/v1/providers', { key: other.key, body: { name: 'thief', kind: 'openai_compatible', base_url: wire.baseURL, api_key: 'sk-thiefs-own-key-000000000' } });
    const victim = await storedRow(tenant.tenantId, 'victim');
    const db = testPlatform().db;
    // Whoever can write the table (not the API) copies another workspace's sealed key into its own row.
    await db.updateTable('provider_connections').set({ api_key: victim.api_key }).where('tenant_id', '=', other.tenantId).where('name', '=', 'thief').execute();
    const before = wire.requests.length;
    const response = await call('POST', '/v1/providers/thief/test', { key: other.key });
    expect(response.status).to.equal(503);
    expect(response.body.error.message).to.include('sealed for another place');
    expect(JSON.stringify(response.body)).to.not.include(KEY);
    expect(wire.requests.length).to.equal(before);

    // Headers that open but are no JSON object: unreadable, without quoting them.
    const garbled = await sealSecret(`not json ${HEADER_VALUE}`, secretContext(tenant.tenantId, victim.id, 'headers'));
    await db.updateTable('provider_connections').set({ headers: garbled }).where('id', '=', victim.id).execute();
    const broken = await call('POST', '/v1/providers/victim/test', { key: tenant.key });
    expect(broken.status).to.equal(503);
    expect(broken.body.error.message).to.include('the stored headers are not a JSON object');
    expect(JSON.stringify(broken.body)).to.not.include(HEADER_VALUE);
    expect(wire.requests.length).to.equal(before);
  });

  it('redacts header values as well as the key from the test call\'s error, and reads at most 1 MiB of the answer', async () => {
    const echoing = await openAiWireServer((request) => ({
      kind: 'error',
      status: 403,
      body: { error: { message: `refused ${request.headers.authorization} with X-Org ${request.headers['x-org']}` } },
    }));
    const padded = { object: 'list', data: [{ id: 'some-model', object: 'model' }], padding: 'x'.repeat(1024 * 1024) };
    const huge = await openAiWireServer(() => ({ kind: 'error', status: 200, body: padded }));
    try {
      await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'echoing', base_url: echoing.baseURL } });
      const refused = await call('POST', '/v1/providers/echoing/test', { key: tenant.key });
      expect(refused.body).to.deep.include({ ok: false, status: 403, error: 'refused Bearer [api_key] with X-Org [header X-Org]' });

      await call('POST', '/v1/providers', { key: tenant.key, body: { ...body(), name: 'huge', base_url: huge.baseURL } });
      const answered = await call('POST', '/v1/providers/huge/test', { key: tenant.key });
      // The list is cut at 1 MiB, so it is no JSON to read models from; read whole, it would list `some-model`.
      expect(answered.body).to.deep.include({ ok: true, status: 200, models: [] });
    } finally {
      await echoing.close();
      await huge.close();
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

/** A connection to `baseURL` as a model call uses it, with the test key and header. */
function connectionTo(baseURL: string): ProviderConnection {
  return { name: 'myprov', kind: 'openai_compatible', baseURL, apiKey: KEY, headers: { 'X-Org': HEADER_VALUE } };
}

/** One model turn of `myprov/some-model` on `connection`, and what it rejected with. */
async function failedTurn(connection: ProviderConnection): Promise<unknown> {
  const settings = { ...modelSettingsFromEnv(), workspaceConnection: async () => connection };
  const callbacks = { signal: new AbortController().signal, onTextDelta: () => undefined };
  return streamModelTurn({ model: 'myprov/some-model', messages: [{ role: 'user', content: 'hi' }], tools: [] }, callbacks, settings).then(
    () => expect.fail('expected the turn to fail'),
    (err: unknown) => err,
  );
}

/** Everything of an error that Temporal or a log could show. */
function everythingOf(err: unknown): string {
  const own = err instanceof Error ? { ...err, message: err.message, stack: err.stack, cause: err.cause } : err;
  return [inspect(err, { depth: 10, showHidden: true }), JSON.stringify(own), String(err)].join('\n');
}

describe('providers: errors of a workspace\'s provider', () => {
  const echo = (request: ReceivedRequest) => `key ${request.headers.authorization?.slice(7)} org ${request.headers['x-org']}`;

  it('turns any failure into an error of ours that quotes neither the key nor a header value, classified as before', async () => {
    const cases: Array<[string, (request: ReceivedRequest) => WireReply, boolean]> = [
      ['a 500 echoing them', (request) => ({ kind: 'error', status: 500, body: { error: { message: echo(request), type: 'server_error' } } }), true],
      ['a 401 echoing them', (request) => ({ kind: 'error', status: 401, body: { error: { message: echo(request) } } }), false],
      // The SDK passes a streamed error chunk on as the plain object it is.
      ['a streamed error chunk echoing them', (request) => ({ kind: 'sse', events: [{ data: { error: { message: echo(request), type: 'server_error' } } }] }), true],
    ];
    for (const [what, answer, retryable] of cases) {
      const server = await openAiWireServer(answer);
      try {
        const err = await failedTurn(connectionTo(server.baseURL));
        expect(server.requests, what).to.have.length(1);
        expect(err, what).to.be.instanceOf(ProviderCallError);
        expect(isRetryableModelError(err), what).to.equal(retryable);
        const error = err as ProviderCallError;
        expect(error.message, what).to.include('key [api_key] org [header X-Org]');
        expect(error.cause, what).to.equal(undefined);
        expect(Object.keys(error), what).to.deep.equal(['retryable', 'name']);
        const shown = everythingOf(err);
        expect(shown, what).to.not.include(KEY);
        expect(shown, what).to.not.include(HEADER_VALUE);
      } finally {
        await server.close();
      }
    }
  });

  it('retries a run past a 500 and a streamed error that echo the key and a header, leaking neither anywhere', async () => {
    const tenant = await newTenant('providers-leaks');
    let calls = 0;
    const server = await openAiWireServer((request) => {
      calls++;
      if (calls === 1) return { kind: 'error', status: 500, body: { error: { message: echo(request), type: 'server_error' } } };
      if (calls === 2) return { kind: 'sse', events: [{ data: { error: { message: echo(request), type: 'server_error' } } }] };
      return chatCompletionStream(request, { text: ['Third time lucky.'] });
    });
    try {
      await call('POST', '/v1/providers', {
        key: tenant.key,
        body: { name: 'flaky', kind: 'openai_compatible', base_url: server.baseURL, api_key: KEY, headers: { 'X-Org': HEADER_VALUE } },
      });
      const agentId = await publishAgent(tenant.key, 'flaky', { nodes: [{ id: 'main', model: 'flaky/some-model', toolRefs: [] }] });
      const { result, output } = await capturingOutput(async () => {
        const run = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'hi' } });
        const runId = run.frames[0]!.data.run_id;
        return { run, record: await call('GET', `/v1/runs/${runId}`, { key: tenant.key }) };
      });
      expect(result.run.frames.at(-1)!.event, JSON.stringify(result.run.frames.at(-1))).to.equal('run.completed');
      expect(result.run.frames.filter((frame) => frame.event === 'attempt.reset')).to.have.length(2);
      expect(calls).to.equal(3);
      const events = await testPlatform().db.selectFrom('run_events').select('data').where('run_id', '=', result.record.body.run.id).execute();
      for (const [where, text] of [
        ['the run stream', JSON.stringify(result.run.frames)],
        ['the run record', JSON.stringify(result.record.body)],
        ['the stored events', JSON.stringify(events)],
        ['the process output', output],
      ]) {
        expect(text, where).to.not.include(KEY);
        expect(text, where).to.not.include(HEADER_VALUE);
      }
    } finally {
      await server.close();
    }
  });
});

describe('providers: a provider that goes silent', () => {
  const IDLE_MS = 300;
  let saved: string | undefined;
  before(() => {
    saved = process.env.PROVIDER_IDLE_TIMEOUT_MS;
    process.env.PROVIDER_IDLE_TIMEOUT_MS = String(IDLE_MS);
  });
  after(() => {
    if (saved === undefined) delete process.env.PROVIDER_IDLE_TIMEOUT_MS;
    else process.env.PROVIDER_IDLE_TIMEOUT_MS = saved;
  });

  /** A server on the allowed host that takes each request and then does what `stall` says, never finishing. */
  async function stallingServer(stall: (res: http.ServerResponse) => void): Promise<{ baseURL: string; close: () => Promise<void> }> {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => stall(res));
    });
    await new Promise<void>((resolve) => server.listen(0, ALLOWED_TOOL_HOST, resolve));
    const { port } = server.address() as AddressInfo;
    return {
      baseURL: `http://${ALLOWED_TOOL_HOST}:${port}/v1`,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  }

  it('gives up on a provider that sends no response headers, or stops in the middle of its answer, as a retryable failure', async () => {
    const silentCases: Array<[string, (res: http.ServerResponse) => void, string]> = [
      ['no headers', () => undefined, `the provider sent no response headers within ${IDLE_MS} ms`],
      [
        'a stalled body',
        (res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'some-model', choices: [{ index: 0, delta: { content: 'Half' }, finish_reason: null }] };
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        },
        `the provider sent nothing for ${IDLE_MS} ms in the middle of its answer`,
      ],
    ];
    for (const [what, stall, message] of silentCases) {
      const server = await stallingServer(stall);
      try {
        const started = performance.now();
        const err = await failedTurn(connectionTo(server.baseURL));
        expect(performance.now() - started, what).to.be.below(5_000);
        expect(err, what).to.be.instanceOf(ProviderCallError);
        expect((err as Error).message, what).to.include(message);
        expect(isRetryableModelError(err), `${what}: ${inspect(err)}`).to.equal(true);
      } finally {
        await server.close();
      }
    }
  });
});

describe('providers: prices', () => {
  it('finds only prices a table itself holds, never a name of Object\'s prototype', () => {
    const workspace = new Map([['myprov', { 'some-model': { prompt: '3', completion: '7' } }]]);
    const usage = { prompt_tokens: 1000, completion_tokens: 500 };
    for (const model of ['myprov/constructor', 'myprov/__proto__', 'myprov/toString', 'constructor', 'hasOwnProperty', 'openai/constructor']) {
      expect(priceFor(model, {}, workspace), model).to.equal(null);
      expect(costUsd(model, usage, {}, workspace), model).to.equal(null);
    }
    expect(costUsd('myprov/some-model', usage, {}, workspace)).to.equal('0.0065');
  });
});
