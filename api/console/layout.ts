import { Html, html, pageHead } from '../oauth/html.js';
import { signInForm } from '../oauth/pages.js';
import type { Workspace } from '../oauth/users.js';
import { CONSOLE_SCRIPT } from './client-script.js';

/** The console's page shell: header, navigation, workspace switcher, sign-out, and its one style and script block. */

export interface ConsolePageContext {
  /** Nonce of the page's style and script blocks (the Content-Security-Policy lets nothing else run). */
  nonce: string;
  csrfToken: string;
}

export interface SignedInContext extends ConsolePageContext {
  email: string;
  workspaces: Workspace[];
  /** The workspace the page is narrowed to, if any (the switcher's choice). */
  current?: Workspace;
}

// Scores are coloured by tenths (.s0 … .s10): the CSP allows no style attributes, only classes.
const HEAT = Array.from({ length: 11 }, (_, i) => `.heat .s${i} { background: hsl(${i * 12}, 70%, ${88 - Math.abs(5 - i) * 2}%); }`).join('\n');

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; color: #1b1f24; background: #f4f5f7; margin: 0; }
  header { display: flex; align-items: center; gap: 1.5rem; padding: .6rem 1.5rem; background: #1b1f24; color: #fff; flex-wrap: wrap; }
  header a { color: #fff; text-decoration: none; }
  header .brand { font-weight: 700; }
  header form { margin: 0; display: inline; }
  header .who { margin-left: auto; font-size: .9rem; color: #c9d1d9; }
  header select, header button { font: inherit; font-size: .9rem; }
  main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1.5rem; }
  main.narrow { max-width: 28rem; background: #fff; border-radius: 8px; padding: 2rem; box-shadow: 0 1px 3px #0002; margin-top: 4rem; }
  h1 { font-size: 1.35rem; margin: 0 0 1rem; }
  h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
  .card { background: #fff; border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; box-shadow: 0 1px 3px #0002; }
  .question { font-size: 1.1rem; font-weight: 600; margin: .25rem 0 .75rem; white-space: pre-wrap; }
  .meta { color: #57606a; font-size: .85rem; }
  .context { white-space: pre-wrap; background: #f6f8fa; border-radius: 6px; padding: .5rem .75rem; margin: .25rem 0; max-height: 12rem; overflow: auto; }
  label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
  input, select, textarea { box-sizing: border-box; padding: .45rem; font: inherit; }
  main.narrow input { width: 100%; }
  textarea { width: 100%; min-height: 4rem; }
  .buttons { display: flex; gap: .75rem; margin-top: .75rem; }
  button { padding: .45rem 1.1rem; font: inherit; border-radius: 6px; border: 1px solid #8c959f; background: #fff; cursor: pointer; }
  button.primary { background: #0969da; border-color: #0969da; color: #fff; }
  button.link { border: 0; padding: 0; background: none; color: inherit; text-decoration: underline; }
  .error { color: #b3261e; }
  .notice { background: #dafbe1; border-radius: 6px; padding: .5rem .75rem; }
  .empty { color: #57606a; }
  .badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: .8rem; background: #eaeef2; }
  .badge.running, .badge.queued { background: #ddf4ff; } .badge.paused { background: #fff8c5; }
  .badge.completed { background: #dafbe1; } .badge.failed, .badge.cancelled { background: #ffebe9; }
  ol.timeline { list-style: none; padding: 0; margin: 0; }
  ol.timeline li { background: #fff; border-left: 4px solid #8c959f; border-radius: 4px; padding: .5rem .9rem; margin-bottom: .5rem; box-shadow: 0 1px 2px #0001; }
  ol.timeline li.model { border-color: #0969da; } ol.timeline li.tool { border-color: #8250df; }
  ol.timeline li.guardrail { border-color: #cf222e; } ol.timeline li.pause { border-color: #bf8700; }
  ol.timeline li.end { border-color: #1a7f37; } ol.timeline li.failure { border-color: #cf222e; }
  ol.timeline .kind { font-weight: 600; }
  pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; border-radius: 6px; padding: .5rem .75rem; margin: .35rem 0; max-height: 20rem; overflow: auto; font-size: .85rem; }
  table { border-collapse: collapse; background: #fff; }
  th, td { padding: .35rem .6rem; border: 1px solid #d0d7de; text-align: left; font-size: .9rem; vertical-align: top; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .heat td.cell { text-align: center; min-width: 3.5rem; }
  .heat .pending, .heat .skipped { background: #f6f8fa; color: #8c959f; }
  .heat .running { background: #ddf4ff; }
  .heat .failed { background: #82071e; color: #fff; }
  ${HEAT}
  .legend span { display: inline-block; width: 1.6rem; text-align: center; font-size: .75rem; }
  code { word-break: break-all; }
`;

function document(context: ConsolePageContext, title: string, head: Html, main: Html): string {
  return html`<!doctype html>
<html lang="en">
${pageHead(`${title} · agent-platform console`, context.nonce, STYLE)}
<body>
${head}
${main}
<script nonce="${context.nonce}">${new Html(CONSOLE_SCRIPT)}</script>
</body>
</html>`.text;
}

/** A page for a signed-in person: `body` inside the header with the inbox link, switcher and sign-out. */
export function consolePage(context: SignedInContext, title: string, body: Html): string {
  const several = context.workspaces.length > 1;
  const header = html`<header>
<a class="brand" href="/console">agent-platform console</a>
<a href="/console/inbox${context.current ? `?workspace=${encodeURIComponent(context.current.id)}` : ''}">Inbox</a>
${
  several
    ? html`<form method="get" action="/console/inbox" data-autosubmit>
<select id="workspace-switcher" name="workspace" aria-label="Workspace">
<option value="">All workspaces</option>
${context.workspaces.map((w) => html`<option value="${w.id}"${context.current?.id === w.id ? new Html(' selected') : ''}>${w.name}</option>
`)}</select>
<button type="submit" data-hide-with-js>Show</button>
</form>`
    : html`<span class="meta">${context.workspaces[0]?.name ?? ''}</span>`
}
<form method="post" action="/console/sign-out" class="who">
<input type="hidden" name="csrf_token" value="${context.csrfToken}">
${context.email} · <button class="link" type="submit">Sign out</button>
</form>
</header>`;
  return document(context, title, header, html`<main>${body}</main>`);
}

/** The sign-in page; the form posts to /console/sign-in and comes back to `next`. */
export function signInPage(context: ConsolePageContext, next: string, options: { email?: string; error?: string } = {}): string {
  const form = signInForm({ styleNonce: context.nonce, csrfToken: context.csrfToken, parameters: [['next', next]] }, '/console/sign-in', options);
  return document(context, 'Sign in', html``, html`<main class="narrow"><h1>Sign in to the console</h1>
<p class="meta">Answer your agents' questions, follow runs and experiments.</p>
${form}</main>`);
}

/** A page with a title and a message, for errors and the like; signed in or not. */
export function messagePage(context: ConsolePageContext | SignedInContext, title: string, message: string | Html): string {
  const body = html`<h1>${title}</h1><p>${message}</p><p><a href="/console">Back to the inbox</a></p>`;
  if ('workspaces' in context) return consolePage(context, title, body);
  return document(context, title, html``, html`<main class="narrow">${body}</main>`);
}

/** A timestamp as the browser shows it; the ISO form stays in `datetime`. */
export function time(value: Date | string | null | undefined): Html {
  if (!value) return html``;
  const iso = typeof value === 'string' ? value : value.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;
}

/** A value shown as JSON, cut at `limit` characters (a tool result can be megabytes). */
export function json(value: unknown, limit = 20_000): Html {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? 'null';
  return html`<pre>${text.length > limit ? `${text.slice(0, limit)}… (${text.length - limit} more characters)` : text}</pre>`;
}
