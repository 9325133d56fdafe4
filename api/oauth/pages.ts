import type { Client } from './clients.js';
import { Html, html, pageHead } from './html.js';
import type { Workspace } from './users.js';

/** The server-rendered pages of the authorize endpoint: sign-in, consent, and errors. */

export interface PageContext {
  /** Per-response nonce that lets our one inline style block past the Content-Security-Policy. */
  styleNonce: string;
  /** The authorization request's parameters, carried through every form as hidden fields. */
  parameters: [string, string][];
  csrfToken: string;
}

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; color: #1b1f24; background: #f4f5f7; margin: 0; }
  main { max-width: 28rem; margin: 4rem auto; background: #fff; border-radius: 8px; padding: 2rem; box-shadow: 0 1px 3px #0002; }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input, select { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
  .buttons { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { padding: .55rem 1.2rem; font: inherit; border-radius: 6px; border: 1px solid #8c959f; background: #fff; cursor: pointer; }
  button.primary { background: #0969da; border-color: #0969da; color: #fff; }
  .error { color: #b3261e; }
  .muted { color: #57606a; font-size: .9rem; }
  .link { border: 0; padding: 0; background: none; color: #0969da; text-decoration: underline; font-size: .9rem; }
  code { word-break: break-all; }
`;

export function page(context: Pick<PageContext, 'styleNonce'>, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
${pageHead(`${title} · agent-platform`, context.styleNonce, STYLE)}
<body><main>
${body}
</main></body>
</html>`.text;
}

export function hiddenFields(context: PageContext, action: string): Html {
  return html`<input type="hidden" name="csrf_token" value="${context.csrfToken}">
<input type="hidden" name="action" value="${action}">
${context.parameters.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">
`)}`;
}

export function signInPage(context: PageContext, client: Client, options: { email?: string; error?: string } = {}): string {
  return page(
    context,
    'Sign in',
    html`<h1>Sign in to agent-platform</h1>
<p><strong>${client.name}</strong> wants to connect to your workspace. Sign in to continue.</p>
${signInForm(context, 'authorize', options)}`,
  );
}

/** The e-mail and password form, posting `action=sign_in` to `target`: the consent page's, and the console's. */
export function signInForm(context: PageContext, target: string, options: { email?: string; error?: string } = {}): Html {
  return html`${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${target}">
${hiddenFields(context, 'sign_in')}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="buttons"><button class="primary" type="submit">Sign in</button></div>
</form>`;
}

export function consentPage(
  context: PageContext,
  details: { client: Client; redirectUri: string; user: { email: string }; workspaces: Workspace[] },
): string {
  const { client, redirectUri, user, workspaces } = details;
  const only = workspaces.length === 1 ? workspaces[0]! : undefined;
  return page(
    context,
    `Authorize ${client.name}`,
    html`<h1>Authorize ${client.name}</h1>
<p><strong>${client.name}</strong> wants access to agent-platform on your behalf.
It will be able to do everything a standard API key can do in the workspace: read, create and run agents, tools,
threads, prompts, memory and knowledge — until the access is revoked.</p>
<p class="muted">The application's name is chosen by whoever registered it; this service has not verified it.</p>
<form method="post" action="authorize">
${hiddenFields(context, 'consent')}
${
  only
    ? html`<p>Workspace: <strong>${only.name}</strong></p>
<input type="hidden" name="tenant_id" value="${only.id}">`
    : html`<label for="tenant_id">Workspace</label>
<select id="tenant_id" name="tenant_id" required>
${workspaces.map((workspace) => html`<option value="${workspace.id}">${workspace.name}</option>
`)}</select>`
}
<p>After you decide, you will be sent to <strong>${redirectHost(redirectUri)}</strong><br><span class="muted"><code>${redirectUri}</code></span></p>
<div class="buttons">
<button class="primary" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>
<form method="post" action="authorize">
${hiddenFields(context, 'sign_out')}
<p class="muted">Signed in as ${user.email}. <button class="link" type="submit">Not you? Sign out</button></p>
</form>`,
  );
}

export function noWorkspacePage(context: Pick<PageContext, 'styleNonce'>, email: string): string {
  return page(
    context,
    'No workspace',
    html`<h1>No workspace</h1>
<p>${email} is not a member of any workspace, so there is nothing to connect. Ask an administrator to add you
(<code>agent-platform user create --email ${email} --tenant …</code>).</p>`,
  );
}

export function errorPage(context: Pick<PageContext, 'styleNonce'>, title: string, message: string, retryHref?: string): string {
  return page(
    context,
    title,
    html`<h1>${title}</h1>
<p>${message}</p>
${retryHref ? html`<p><a href="${retryHref}">Start again</a></p>` : ''}
<p class="muted">You can close this window.</p>`,
  );
}

/**
 * A known client's request that cannot be served. The error for the client is a link the person may
 * follow, never a redirect: the client's registered address is not proof that it is benign.
 */
export function invalidRequestPage(
  context: Pick<PageContext, 'styleNonce'>,
  details: { client: Client; redirectUri: string; error: string; description: string; location: string },
): string {
  return page(
    context,
    'This request cannot be used',
    html`<h1>This request cannot be used</h1>
<p><strong>${details.client.name}</strong> sent you here with a request this service cannot accept:</p>
<p><code>${details.error}</code>: ${details.description}</p>
<p class="muted">The application's name is chosen by whoever registered it; this service has not verified it.</p>
<p><a href="${details.location}">Return to ${redirectHost(details.redirectUri)} with this error</a></p>
<p class="muted">You can close this window.</p>`,
  );
}

/**
 * What the person should recognize: the host of a web address, or the app a native scheme opens. A
 * native scheme can name any host (`x-app://claude.ai/cb`) without reaching it: its scheme is what
 * decides where the code goes, so it is what is shown, not that host.
 */
export function redirectHost(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host;
  return `the app for ${url.protocol}//`;
}
