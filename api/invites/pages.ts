import type { InviteStatus } from '../../db/invites.js';
import { html, type Html } from '../oauth/html.js';
import { hiddenFields, page, signInForm, type PageContext } from '../oauth/pages.js';

/** The pages of an invite link ({PUBLIC_URL}/invites/{token}), in the consent page's look and HTML escaping. */

export interface InviteView {
  /** The link's last path segment: the forms post back to it. */
  token: string;
  email: string;
  role: string;
  workspace: string;
}

function heading(invite: InviteView): Html {
  return html`<h1>Join ${invite.workspace}</h1>
<p>You were invited to the workspace <strong>${invite.workspace}</strong> as <strong>${invite.role}</strong>.
The invite is for <strong>${invite.email}</strong>.</p>`;
}

export function inviteSignInPage(context: PageContext, invite: InviteView, options: { email?: string; error?: string } = {}): string {
  return page(
    context,
    `Join ${invite.workspace}`,
    html`${heading(invite)}
<p>Sign in with that address to continue.</p>
${signInForm(context, invite.token, { email: options.email ?? invite.email, error: options.error })}`,
  );
}

export function createAccountPage(context: PageContext, invite: InviteView, options: { error?: string } = {}): string {
  return page(
    context,
    `Join ${invite.workspace}`,
    html`${heading(invite)}
<p>There is no account for ${invite.email} yet. Choose a password to create it.</p>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="${invite.token}">
${hiddenFields(context, 'create_account')}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" value="${invite.email}" readonly>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required>
<label for="password_again">Password again</label>
<input id="password_again" name="password_again" type="password" autocomplete="new-password" required>
<div class="buttons"><button class="primary" type="submit">Create account</button></div>
</form>`,
  );
}

export function joinPage(context: PageContext, invite: InviteView, signedInAs: string): string {
  return page(
    context,
    `Join ${invite.workspace}`,
    html`${heading(invite)}
<form method="post" action="${invite.token}">
${hiddenFields(context, 'accept')}
<div class="buttons"><button class="primary" type="submit">Join ${invite.workspace}</button></div>
</form>
${signOutForm(context, invite, signedInAs)}`,
  );
}

/** Signed in, but not as the person the invite is for: the link is theirs alone. */
export function wrongAccountPage(context: PageContext, invite: InviteView, signedInAs: string): string {
  return page(
    context,
    'This invite is for someone else',
    html`<h1>This invite is for someone else</h1>
<p>This invite to <strong>${invite.workspace}</strong> is for <strong>${invite.email}</strong>, but you are signed in as
<strong>${signedInAs}</strong>. Sign out and sign in (or create an account) with ${invite.email}, or ask for an invite to your own address.</p>
${signOutForm(context, invite, signedInAs)}`,
  );
}

export function joinedPage(context: Pick<PageContext, 'styleNonce'>, details: { workspace: string; role: string; already: boolean; consoleUrl: string }): string {
  return page(
    context,
    `Welcome to ${details.workspace}`,
    html`<h1>Welcome to ${details.workspace}</h1>
${
  details.already
    ? html`<p>You were already a member of <strong>${details.workspace}</strong>; your role there is unchanged (<strong>${details.role}</strong>).</p>`
    : html`<p>You joined <strong>${details.workspace}</strong> as <strong>${details.role}</strong>.</p>`
}
<p><a href="${details.consoleUrl}">Open the console</a>. Applications you connect (OAuth) can now act in this workspace on your behalf once you approve them.</p>`,
  );
}

const UNUSABLE: Record<Exclude<InviteStatus, 'pending'>, { title: string; message: (workspace: string) => string }> = {
  accepted: {
    title: 'This invite was already used',
    message: (workspace) => `Each invite link works once, and this one has been used to join ${workspace}. If that was you, sign in as usual; otherwise ask an owner or admin of ${workspace} for a new invite.`,
  },
  expired: {
    title: 'This invite has expired',
    message: (workspace) => `Invites work for a limited time. Ask an owner or admin of ${workspace} for a new one.`,
  },
  revoked: {
    title: 'This invite was revoked',
    message: (workspace) => `An owner or admin of ${workspace} withdrew this invite. Ask them for a new one if you still need access.`,
  },
};

export function unusableInvitePage(context: Pick<PageContext, 'styleNonce'>, status: Exclude<InviteStatus, 'pending'>, workspace: string): string {
  const { title, message } = UNUSABLE[status];
  return page(context, title, html`<h1>${title}</h1>
<p>${message(workspace)}</p>
<p class="muted">You can close this window.</p>`);
}

function signOutForm(context: PageContext, invite: InviteView, signedInAs: string): Html {
  return html`<form method="post" action="${invite.token}">
${hiddenFields(context, 'sign_out')}
<p class="muted">Signed in as ${signedInAs}. <button class="link" type="submit">Not you? Sign out</button></p>
</form>`;
}
