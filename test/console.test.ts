import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { call, newTenant, type TestTenant } from './support/api.js';
import { createBuiltinTool, createTool, publishAgent, scriptedGraph } from './support/agents.js';
import { addCases, createSuite, finishedExperiment, startExperiment } from './support/evals.js';
import { testPlatform } from './support/global.js';
import { launchChromium } from './support/oauth-browser.js';
import { newOAuthUser, type TestUser } from './support/oauth-users.js';
import { stream } from './support/sse.js';

const OUTPUT_DIR = resolve('test-output', 'console');

describe('console (Chromium)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let tenant: TestTenant;
  let elsewhere: TestTenant;
  let person: TestUser;
  let outsider: TestUser;
  let askerId: string;
  let askHuman: string;
  const contexts: BrowserContext[] = [];

  before(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    browser = await launchChromium();
    tenant = await newTenant('console');
    elsewhere = await newTenant('console-elsewhere');
    const spare = await newTenant('console-spare');
    person = await newOAuthUser([tenant.tenantId, spare.tenantId], 'console');
    outsider = await newOAuthUser([elsewhere.tenantId], 'console-outsider');
    askHuman = await createBuiltinTool(tenant.key, 'ask_human');
    askerId = await publishAgent(tenant.key, 'asker', scriptedGraph([
      { text: 'Let me check with you first.', tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which colour <b>exactly</b>?' } }] },
      { text: 'Noted your colour.' },
    ], [askHuman]));
  });

  afterEach(async () => {
    while (contexts.length) await contexts.pop()!.close();
  });

  after(async () => {
    await browser?.close();
  });

  const url = (path: string) => testPlatform().apiUrl + path;

  async function signedInPage(user: TestUser, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext(options);
    contexts.push(context);
    const page = await context.newPage();
    const opened = await page.goto(url('/console'));
    expect(opened!.status()).to.equal(200);
    expect(await page.textContent('h1')).to.equal('Sign in to the console');
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await Promise.all([page.waitForURL(url('/console')), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).to.match(/^Inbox/);
    return page;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: resolve(OUTPUT_DIR, `${name}.png`), fullPage: true });
  }

  /** Starts a run of the asker agent in `tenant` and answers its id once it is paused on its question. */
  async function pausedRun(input: string): Promise<string> {
    const response = await stream('POST', `/v1/agents/${askerId}/runs`, { key: tenant.key, body: { input } });
    expect(response.frames.at(-1)!.event).to.equal('run.paused');
    return response.frames[0]!.data.run_id as string;
  }

  async function runAfterAnswer(runId: string) {
    const rest = await stream('GET', `/v1/runs/${runId}/events`, { key: tenant.key });
    expect(rest.frames.at(-1)!.event).to.equal('run.completed');
    return (await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body;
  }

  const card = (runId: string) => `[data-run-id="${runId}"]`;

  it('shows paused runs\' questions; answering one in the page resumes the run, and every open inbox loses it live', async () => {
    const first = await pausedRun('pick a colour for the logo');
    const inbox = await signedInPage(person);
    const other = await signedInPage(person);
    const response = await inbox.reload();
    expect(response!.headers()['content-security-policy']).to.match(/default-src 'none'.*script-src 'nonce-/);
    expect(response!.headers()['x-frame-options']).to.equal('DENY');
    expect(response!.headers()['cache-control']).to.equal('no-store');

    // The question with its context; the markup in it is text, not HTML.
    const question = await inbox.textContent(`${card(first)} .question`);
    expect(question).to.equal('Which colour <b>exactly</b>?');
    expect(await inbox.$(`${card(first)} .question b`)).to.equal(null);
    expect(await inbox.textContent(card(first))).to.include('pick a colour for the logo').and.include('Let me check with you first.').and.include('asker');

    // A question asked while the pages are open appears in both, newest first.
    const second = await pausedRun('pick a colour for the banner');
    for (const page of [inbox, other]) {
      await page.waitForSelector(card(second));
      const order = await page.$$eval('#inbox [data-run-id]', (cards) => cards.map((c) => c.getAttribute('data-run-id')));
      expect(order.indexOf(second)).to.be.lessThan(order.indexOf(first));
    }
    await screenshot(inbox, '1-inbox');

    await inbox.fill(`${card(first)} textarea[name=answer]`, 'blue');
    await inbox.click(`${card(first)} button[type=submit]`);
    await inbox.waitForSelector(card(first), { state: 'detached' });
    // The other page was not reloaded: its stream took the answered question away.
    await other.waitForSelector(card(first), { state: 'detached', timeout: 10_000 });
    expect(await other.$(card(second))).to.not.equal(null);
    await screenshot(other, '2-inbox-after-answer');

    const done = await runAfterAnswer(first);
    expect(done.run).to.include({ status: 'completed', output: 'Noted your colour.', pending_question: null });
    expect(done.steps[0].result).to.deep.equal({ answer: 'blue' });

    // Without JavaScript the form still works: it posts, and the inbox comes back without the question.
    const plain = await signedInPage(person, { javaScriptEnabled: false });
    await plain.fill(`${card(second)} textarea[name=answer]`, 'green');
    await Promise.all([plain.waitForURL(/\/console\/inbox\?answered=/), plain.click(`${card(second)} button[type=submit]`)]);
    expect(await plain.textContent('.notice')).to.include(second);
    expect(await plain.$(card(second))).to.equal(null);
    expect((await runAfterAnswer(second)).steps[0].result).to.deep.equal({ answer: 'green' });
    await other.waitForSelector(card(second), { state: 'detached', timeout: 10_000 });
    await other.waitForSelector('#inbox-empty:not([hidden])');
  });

  it("shows a subagent's question once, on its top run, and the answer given there reaches the subagent", async () => {
    await publishAgent(tenant.key, 'console-leaf', scriptedGraph([
      { tool_calls: [{ tool: 'ask_human', arguments: { question: 'Which shade of teal?' } }] },
      { text: 'leaf done' },
    ], [askHuman]));
    const askLeaf = await createTool(tenant.key, { name: 'console_leaf', kind: 'agent', agent: { agent: 'console-leaf' } });
    const top = await publishAgent(tenant.key, 'console-top', scriptedGraph([
      { tool_calls: [{ tool: 'console_leaf', arguments: { input: 'find out' } }] },
      { text: 'top done' },
    ], [askLeaf]));
    const response = await stream('POST', `/v1/agents/${top}/runs`, { key: tenant.key, body: { input: 'go' } });
    expect(response.frames.at(-1)!.event).to.equal('run.paused');
    const topId = response.frames[0]!.data.run_id as string;
    const leafId = (await call('GET', `/v1/runs?parent_run_id=${topId}`, { key: tenant.key })).body.runs[0].id as string;
    expect((await call('GET', `/v1/runs/${leafId}`, { key: tenant.key })).body.run.status, 'the subagent waits too').to.equal('paused');

    const page = await signedInPage(person);
    const asking = await page.$$eval('#inbox .card', (cards) => cards.filter((c) => c.textContent!.includes('Which shade of teal?')).map((c) => c.getAttribute('data-run-id')));
    expect(asking).to.deep.equal([topId]);
    expect(await page.getAttribute(card(topId), 'data-key')).to.equal(`${topId}:${response.frames.at(-1)!.data.question_id}`);
    await page.fill(`${card(topId)} textarea[name=answer]`, 'teal');
    await page.click(`${card(topId)} button[type=submit]`);
    await page.waitForSelector(card(topId), { state: 'detached' });
    expect((await runAfterAnswer(topId)).run.output).to.equal('top done');
    expect((await call('GET', `/v1/runs/${leafId}`, { key: tenant.key })).body.steps[0].result, 'the answer reached the subagent').to.deep.equal({ answer: 'teal' });
  });

  it('refuses a form post without its CSRF token, and a second answer to the same question', async () => {
    const runId = await pausedRun('pick a colour for the icon');
    const page = await signedInPage(person);
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const token = await page.inputValue(`${card(runId)} input[name=csrf_token]`);
    const post = (body: Record<string, string>) =>
      fetch(url(`/console/runs/${runId}/answer`), {
        method: 'POST',
        headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded', 'x-requested-with': 'fetch' },
        body: new URLSearchParams(body).toString(),
        redirect: 'manual',
      });
    expect((await post({ answer: 'red' })).status).to.equal(403);
    expect((await post({ answer: 'red', csrf_token: token.slice(0, -2) + 'xx' })).status).to.equal(403);
    expect((await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run.status).to.equal('paused');
    // Signing out needs the token too.
    const signOut = await fetch(url('/console/sign-out'), { method: 'POST', headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
    expect(signOut.status).to.equal(403);

    expect((await post({ answer: 'red', csrf_token: token })).status).to.equal(204);
    const again = await post({ answer: 'yellow', csrf_token: token });
    expect(again.status).to.equal(409);
    expect((await runAfterAnswer(runId)).steps[0].result).to.deep.equal({ answer: 'red' });

    // Signed out, the same cookie reaches nothing.
    await Promise.all([page.waitForURL(url('/console')), page.click('header form.who button')]);
    expect(await page.textContent('h1')).to.equal('Sign in to the console');
    expect((await fetch(url('/console/inbox/events'), { headers: { cookie: cookies } })).status).to.equal(401);
  });

  it('shows a run as a timeline that follows the run live', async () => {
    const runId = await pausedRun('pick a colour for the footer');
    const page = await signedInPage(person);
    const opened = await page.goto(url(`/console/runs/${runId}`));
    expect(opened!.status()).to.equal(200);
    expect(await page.textContent('#run-status')).to.equal('paused');
    const types = () => page.$$eval('#timeline li', (items) => items.map((li) => li.getAttribute('data-type')));
    expect(await types()).to.deep.equal(['run.created', 'run.started', 'message.completed', 'tool_call.started', 'run.paused']);
    expect(await page.textContent('#timeline li[data-type="tool_call.started"]')).to.include('ask_human').and.include('"question": "Which colour <b>exactly</b>?"');
    await screenshot(page, '3-run-paused');

    expect((await call('POST', `/v1/runs/${runId}/answer`, { key: tenant.key, body: { answer: 'purple' } })).status).to.equal(200);
    await page.waitForSelector('#timeline li[data-type="run.completed"]', { timeout: 15_000 });
    await page.waitForSelector('#run-status.completed');
    expect(await types()).to.deep.equal([
      'run.created', 'run.started', 'message.completed', 'tool_call.started', 'run.paused',
      'run.resumed', 'tool_call.completed', 'message.completed', 'run.completed',
    ]);
    expect(await page.textContent('#timeline li[data-type="tool_call.completed"]')).to.include('"answer": "purple"');
    expect(await page.textContent('#timeline li[data-type="run.completed"]')).to.include('Noted your colour.');
    await screenshot(page, '4-run-completed');

    // What the live page built is what a fresh load renders.
    const live = await page.$$eval('#timeline li', (items) => items.map((li) => li.textContent));
    await page.reload();
    expect(await page.$$eval('#timeline li', (items) => items.map((li) => li.textContent))).to.deep.equal(live);
  });

  it('shows an experiment\'s leaderboard and heat map, updating while it runs', async () => {
    const agentId = await publishAgent(tenant.key, 'capitals', scriptedGraph([{ text: 'Paris' }]));
    const suite = await createSuite(tenant.key, agentId, 'console-capitals', [{ type: 'contains' }]);
    await addCases(tenant.key, suite.id, [
      { input: 'Capital of France?', expected: 'Paris' },
      { input: 'Capital of Germany?', expected: 'Berlin' },
      { input: 'Where is the Louvre?', expected: 'Paris' },
    ]);
    const experiment = await startExperiment(tenant.key, {
      suite: suite.id,
      name: 'paris vs berlin',
      concurrency: 1,
      variants: [
        { name: 'paris', graph: scriptedGraph([{ text: 'It is Paris.', delay_ms: 700 }]) },
        { name: 'berlin', graph: scriptedGraph([{ text: 'It is Berlin.', delay_ms: 700 }]) },
      ],
    });
    const page = await signedInPage(person);
    const opened = await page.goto(url(`/console/experiments/${experiment.id}`));
    expect(opened!.status()).to.equal(200);
    const unfinished = await page.$$eval('#heatmap td.cell', (cells) => cells.filter((c) => c.getAttribute('data-status') !== 'completed').length);
    expect(unfinished, 'the page opened before the experiment ended').to.be.greaterThan(0);
    expect(await page.$$('#heatmap td.cell')).to.have.length(6);
    await screenshot(page, '5-experiment-running');

    await page.waitForSelector('#experiment-status.completed', { timeout: 60_000 });
    const done = await finishedExperiment(tenant.key, experiment.id);
    // The page's leaderboard is the API's: same order, same scores.
    const rows = await page.$$eval('#leaderboard tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-variant'), tr.children[2]!.textContent]));
    expect(rows).to.deep.equal(done.leaderboard.map((row: any) => [row.variant, String(Math.round(row.primary_score * 100) / 100)]));
    expect(rows[0]![0]).to.equal('paris');
    // Each heat-map cell carries its case's score for its variant, and its colour says so.
    for (const row of done.results) {
      for (const cell of row.cells) {
        const selector = `#heatmap tr[data-case="${row.case_id}"] td.cell:nth-child(${cell.variant === 'paris' ? 2 : 3})`;
        expect(await page.getAttribute(selector, 'data-score')).to.equal(String(cell.scores.contains.score));
        expect(await page.getAttribute(selector, 'class')).to.equal(`cell s${cell.scores.contains.score * 10}`);
      }
    }
    await screenshot(page, '6-experiment-completed');
  });

  it('answers a run or experiment of another workspace with a 404 page', async () => {
    const runId = await pausedRun('pick a colour for the outsider');
    const experiment = (await call('GET', '/v1/evals/experiments?limit=1', { key: tenant.key })).body.experiments[0];
    const page = await signedInPage(outsider);
    expect(await page.$(card(runId))).to.equal(null);
    for (const path of [`/console/runs/${runId}`, `/console/experiments/${experiment.id}`, '/console/runs/run_nothing']) {
      const response = await page.goto(url(path));
      expect(response!.status(), path).to.equal(404);
      expect(await page.textContent('h1')).to.match(/not found/);
    }
    await screenshot(page, '7-not-found');
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    expect((await fetch(url(`/console/runs/${runId}/events`), { headers: { cookie: cookies } })).status).to.equal(404);
    expect((await fetch(url(`/console/inbox/events?workspace=${tenant.tenantId}`), { headers: { cookie: cookies } })).status).to.equal(404);
    const token = await page.inputValue('header input[name=csrf_token]');
    const answer = await fetch(url(`/console/runs/${runId}/answer`), {
      method: 'POST',
      headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded', 'x-requested-with': 'fetch' },
      body: new URLSearchParams({ answer: 'mine now', csrf_token: token }).toString(),
    });
    expect(answer.status).to.equal(404);
    expect((await call('GET', `/v1/runs/${runId}`, { key: tenant.key })).body.run.status).to.equal('paused');
    // The "answered" notice names only a run of the person's.
    await page.goto(url(`/console/inbox?answered=${runId}`));
    expect(await page.$('.notice')).to.equal(null);

    // Ids no row can have (U+0000, which Postgres refuses; far too long) are a 404 too, not a 500.
    for (const id of ['%00', 'run_%00x', 'r'.repeat(201)]) {
      for (const path of [`/console/runs/${id}`, `/console/runs/${id}/events`, `/console/experiments/${id}`, `/console/experiments/${id}/events`]) {
        expect((await fetch(url(path), { headers: { cookie: cookies } })).status, path).to.equal(404);
      }
      const posted = await fetch(url(`/console/runs/${id}/answer`), {
        method: 'POST',
        headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded', 'x-requested-with': 'fetch' },
        body: new URLSearchParams({ answer: 'x', csrf_token: token }).toString(),
      });
      expect(posted.status, id).to.equal(404);
    }
    await call('POST', `/v1/runs/${runId}/cancel`, { key: tenant.key });
  });

  it('limits how many event streams a session holds open', async () => {
    const page = await signedInPage(person);
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    // At most ten at once (the page's own counts as well); closing one frees its place.
    const aborts: AbortController[] = [];
    // Held until the end: fetch cancels the body of a response that is garbage-collected unread, which
    // would close its stream and free its place early.
    const responses: Response[] = [];
    const open = async () => {
      const abort = new AbortController();
      aborts.push(abort);
      const response = await fetch(url('/console/inbox/events'), { headers: { cookie: cookies }, signal: abort.signal });
      responses.push(response);
      return response.status;
    };
    try {
      const statuses: number[] = [];
      while (statuses.length < 12 && statuses.at(-1) !== 429) statuses.push(await open());
      expect(statuses.at(-1), String(statuses)).to.equal(429);
      expect(statuses.filter((status) => status === 200).length, String(statuses)).to.be.within(9, 10);
      aborts.shift()!.abort();
      let again = 429;
      for (let i = 0; i < 20 && again === 429; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = await open();
      }
      expect(again).to.equal(200);
    } finally {
      for (const abort of aborts) abort.abort();
    }
  });

  it('ends open event streams when the session signs out', async () => {
    const page = await signedInPage(person);
    const other = await page.context().newPage();
    await other.goto(url('/console/inbox'));
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    // The other page follows live: a new question reaches it.
    const before = await pausedRun('pick a colour before signing out');
    await other.waitForSelector(card(before), { timeout: 10_000 });

    // A stream followed outside the pages, to see it end.
    const followed = await fetch(url('/console/inbox/events'), { headers: { cookie: cookies } });
    expect(followed.status).to.equal(200);
    const reader = followed.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();

    await Promise.all([page.waitForURL(url('/console')), page.click('header form.who button')]);
    expect(await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve(false), 10_000))]), 'the stream ended after the sign-out').to.equal(true);
    // The other page's stream ended the same way: a question asked now does not reach it.
    const after = await pausedRun('pick a colour after signing out');
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(await other.$(card(after))).to.equal(null);
    for (const runId of [before, after]) await call('POST', `/v1/runs/${runId}/cancel`, { key: tenant.key });
  });
});
