import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { testPlatform } from './support/global.js';
import { launchChromium } from './support/oauth-browser.js';

/** The little of the DOM a predicate run in the page reads (the suite compiles without the DOM library). */
type PageGlobals = { document: { querySelector(selector: string): { dataset: Record<string, string>; textContent: string | null } | null } };

const OUTPUT_DIR = resolve('test-output', 'deployments');
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

describe('deployments: the hosted chat page', function () {
  this.timeout(120_000);
  let browser: Browser;
  let context: BrowserContext;
  let tenant: TestTenant;
  let cspViolations: string[];

  before(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    browser = await launchChromium();
    tenant = await newTenant('chat-page');
  });
  after(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
    cspViolations = [];
  });
  afterEach(async () => {
    await context.close();
    expect(cspViolations, 'the page runs within its Content-Security-Policy').to.deep.equal([]);
  });

  async function deploy(agentId: string, extra: Record<string, unknown> = {}) {
    const response = await call('POST', '/v1/deployments', { key: tenant.key, body: { agent: agentId, slug: unique('chat'), ...extra } });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body.deployment as { id: string; slug: string; url: string; publishable_key: string };
  }

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    await page.goto(url);
    return page;
  }

  async function send(page: Page, text: string) {
    await page.fill('#message', text);
    await page.click('#composer button[type=submit]');
  }

  /** The text of the agent's `n`th reply (from 1) once it is final. */
  async function reply(page: Page, n: number): Promise<string> {
    const selector = `.msg.agent:not(.pending) >> nth=${n - 1}`;
    await page.locator(selector).waitFor();
    return page.locator(selector).innerText();
  }

  const screenshot = (page: Page, name: string) => page.screenshot({ path: resolve(OUTPUT_DIR, `${name}.png`), fullPage: true });

  it('is served with the security headers, and a plain 404 for an unknown slug', async () => {
    const agentId = await publishAgent(tenant.key, 'headers-bot', scriptedGraph([{ text: 'hi' }]));
    const deployment = await deploy(agentId, { title: 'Headers <b>bot</b>', allowed_origins: ['https://shop.example.com'] });
    expect(deployment.url).to.equal(`${testPlatform().apiUrl}/d/${deployment.slug}`);
    const page = await fetch(deployment.url);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.contain('text/html');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).to.contain("default-src 'none'").and.contain("connect-src 'self'").and.contain('frame-ancestors https://shop.example.com');
    const scriptNonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    const html = await page.text();
    expect(html).to.contain(`<script nonce="${scriptNonce}">`);
    expect(html, 'the title is text').to.contain('Headers &#60;b&#62;bot&#60;/b&#62;').and.not.contain('<b>bot');
    expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(page.headers.get('cache-control')).to.equal('no-store');

    const missing = await fetch(`${testPlatform().apiUrl}/d/no-such-deployment`);
    expect(missing.status).to.equal(404);
    expect(missing.headers.get('x-frame-options')).to.equal('DENY');
    expect(await missing.text()).to.contain('There is no chat here');
    expect((await fetch(`${testPlatform().apiUrl}/d/${deployment.slug}`, { method: 'POST' })).status).to.equal(405);
  });

  it('streams the answer as it is written', async () => {
    const words = 'one two three four five six seven eight nine ten eleven twelve';
    const agentId = await publishAgent(tenant.key, 'slow-bot', scriptedGraph([{ text: words, delay_ms: 3000 }]));
    const page = await open((await deploy(agentId)).url);
    await send(page, 'count for me');
    // Part of the answer is on the page while the rest is still being written.
    // A function, not a string: the page's CSP forbids eval, which a string predicate would need.
    const partial = await page.waitForFunction(() => {
      const el = (globalThis as unknown as PageGlobals).document.querySelector('.msg.agent.pending');
      return el && Number(el.dataset.deltas) >= 2 ? el.textContent : null;
    });
    const partialText = (await partial.jsonValue()) as string;
    expect(words.startsWith(partialText!)).to.equal(true);
    expect(partialText.length).to.be.lessThan(words.length);
    await screenshot(page, '1-streaming');
    expect(await reply(page, 1)).to.equal(words);
  });

  it('continues the thread on the next message, and after a reload', async () => {
    // The echo model answers with the roles of the conversation it was sent: the thread's history shows.
    const agentId = await publishAgent(tenant.key, 'echo-bot', { nodes: [{ id: 'main', model: 'ollama/echo', toolRefs: [] }] });
    const deployment = await deploy(agentId, { title: 'Echo desk' });
    const page = await open(deployment.url);
    await send(page, 'hello');
    expect(await reply(page, 1)).to.match(/^saw (system,)?user; last: "hello"$/);
    await send(page, 'second question');
    expect(await reply(page, 2)).to.match(/^saw (system,)?user,assistant,user; last: "second question"$/);
    await screenshot(page, '2-thread');

    await page.reload();
    expect(await page.locator('.msg').allInnerTexts()).to.have.length(4);
    await send(page, 'after reload');
    expect(await reply(page, 3)).to.match(/^saw (system,)?user,assistant,user,assistant,user; last: "after reload"$/);

    const runs = (await call('GET', `/v1/agents/${agentId}/runs?source=deployment`, { key: tenant.key })).body.runs;
    expect(runs).to.have.length(3);
    expect(new Set(runs.map((run: { thread_id: string }) => run.thread_id)).size, 'one thread').to.equal(1);
    expect(runs.every((run: { deployment_id: string }) => run.deployment_id === deployment.id)).to.equal(true);

    // The thread goes with its visitor token; one the API no longer accepts (404) starts a new conversation.
    const storageKey = JSON.stringify(`agent-platform:deployment:${deployment.slug}`);
    const saved = JSON.parse((await page.evaluate(`localStorage.getItem(${storageKey})`)) as string);
    expect(saved.visitorToken).to.match(/^svc_vt_/);
    await page.evaluate(`localStorage.setItem(${storageKey}, JSON.stringify({ ...JSON.parse(localStorage.getItem(${storageKey})), visitorToken: 'svc_vt_lost' }))`);
    await page.reload();
    await send(page, 'token lost');
    expect(await reply(page, 4)).to.match(/^saw (system,)?user; last: "token lost"$/);
    const after = (await call('GET', `/v1/agents/${agentId}/runs?source=deployment`, { key: tenant.key })).body.runs;
    expect(new Set(after.map((run: { thread_id: string }) => run.thread_id)).size, 'a new thread').to.equal(2);

    await page.click('#restart');
    await send(page, 'fresh start');
    expect(await reply(page, 1)).to.match(/^saw (system,)?user; last: "fresh start"$/);
  });

  it("shows an ask_human question with an answer box, and the answer continues the run", async () => {
    const askHuman = await createBuiltinTool(tenant.key, 'ask_human');
    const agentId = await publishAgent(tenant.key, 'colour-bot', scriptedGraph([
      { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour?' } }] },
      { text: 'Noted: your colour is saved.' },
    ], [askHuman]));
    const page = await open((await deploy(agentId, { title: 'Colour picker' })).url);
    await send(page, 'pick a colour for me');
    const question = page.locator('form.question');
    await question.waitFor();
    expect(await question.locator('p').innerText()).to.equal('Which colour?');
    await screenshot(page, '3-question');

    // A reload while the run waits keeps the question.
    await page.reload();
    await page.locator('form.question').waitFor();
    await page.fill('form.question input', 'blue');
    await page.click('form.question button');
    expect(await reply(page, 1)).to.equal('Noted: your colour is saved.');
    expect(await page.locator('.msg.question').innerText()).to.equal('Which colour?');
    await screenshot(page, '4-answered');

    const runs = (await call('GET', `/v1/agents/${agentId}/runs`, { key: tenant.key })).body.runs;
    const run = (await call('GET', `/v1/runs/${runs[0].id}`, { key: tenant.key })).body;
    expect(run.run).to.include({ status: 'completed', source: 'deployment' });
    expect(run.steps[0].result).to.deep.equal({ answer: 'blue' });
  });
});
