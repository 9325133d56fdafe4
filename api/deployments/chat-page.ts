import { Html, html, pageHead } from '../oauth/html.js';
import { CHAT_PAGE_SCRIPT } from './chat-page-script.js';

/** The hosted chat page of a deployment (`/d/{slug}`), server-rendered; its script is CHAT_PAGE_SCRIPT. */

const STYLE = `
  * { box-sizing: border-box; }
  body { font: 16px/1.5 system-ui, sans-serif; color: #1b1f24; background: #f4f5f7; margin: 0; }
  main { max-width: 44rem; margin: 0 auto; min-height: 100vh; display: flex; flex-direction: column; background: #fff; box-shadow: 0 1px 3px #0002; }
  header { display: flex; align-items: center; justify-content: space-between; padding: 1rem 1.25rem; border-bottom: 1px solid #d0d7de; }
  h1 { font-size: 1.15rem; margin: 0; }
  #log { flex: 1; padding: 1.25rem; display: flex; flex-direction: column; gap: .75rem; overflow-y: auto; }
  .msg { max-width: 85%; padding: .55rem .85rem; border-radius: 12px; white-space: pre-wrap; word-wrap: break-word; }
  .msg.user { align-self: flex-end; background: #0969da; color: #fff; }
  .msg.agent { align-self: flex-start; background: #eef1f4; }
  .msg.agent.pending:empty::after { content: '…'; color: #57606a; }
  .msg.question { align-self: flex-start; background: #fff8c5; border: 1px solid #d4a72c; }
  .msg.error { align-self: flex-start; background: #ffebe9; color: #b3261e; }
  form.question { align-self: stretch; background: #fff8c5; border: 1px solid #d4a72c; border-radius: 12px; padding: .75rem; display: flex; flex-wrap: wrap; gap: .5rem; }
  form.question p { flex-basis: 100%; margin: 0 0 .25rem; font-weight: 600; }
  form.question input { flex: 1; }
  #composer { display: flex; gap: .5rem; padding: 1rem 1.25rem; border-top: 1px solid #d0d7de; }
  input { padding: .55rem; font: inherit; border: 1px solid #8c959f; border-radius: 6px; }
  #message { flex: 1; }
  button { padding: .55rem 1.1rem; font: inherit; border-radius: 6px; border: 1px solid #0969da; background: #0969da; color: #fff; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  button.link { border: 0; background: none; color: #0969da; padding: 0; font-size: .9rem; }
  #status { padding: 0 1.25rem; color: #57606a; font-size: .9rem; min-height: 1.35rem; }
`;

export interface ChatPage {
  styleNonce: string;
  scriptNonce: string;
  title: string;
  slug: string;
  agentId: string;
  publishableKey: string;
}

export function chatPage(page: ChatPage): string {
  // JSON in a data block: `<` escaped so no value can close the element.
  const config = JSON.stringify({ slug: page.slug, agentId: page.agentId, key: page.publishableKey }).replace(/</g, '\\u003c');
  return html`<!doctype html>
<html lang="en">
${pageHead(page.title, page.styleNonce, STYLE)}
<body><main>
<header><h1>${page.title}</h1><button class="link" id="restart" type="button">New conversation</button></header>
<div id="log" aria-live="polite"></div>
<div id="status" role="status"></div>
<form id="composer">
<input id="message" name="message" autocomplete="off" placeholder="Send a message" aria-label="Message" maxlength="200000">
<button type="submit">Send</button>
</form>
</main>
<script type="application/json" id="deployment">${new Html(config)}</script>
<script nonce="${page.scriptNonce}">${new Html(CHAT_PAGE_SCRIPT)}</script>
</body>
</html>`.text;
}

export function chatPageNotFound(styleNonce: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Not found</title>
<style nonce="${styleNonce}">${new Html(STYLE)}</style>
</head>
<body><main><header><h1>Not found</h1></header><p id="log">There is no chat here. The address may be mistyped, or the deployment was removed.</p></main></body>
</html>`.text;
}
