import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { findInviteByToken, inviteStatus, markInviteAccepted, type Invite } from '../../db/invites.js';
import { addMember } from '../../db/members.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { answerPage, pageHeaders, redirect } from '../oauth/authorize-endpoint.js';
import { oauthClock } from '../oauth/clock.js';
import { readPageForm } from '../oauth/http.js';
import { errorPage, type PageContext } from '../oauth/pages.js';
import { csrfToken, endSession, isCsrfTokenValid, loadSession, startSession, type BrowserSession } from '../oauth/sessions.js';
import { signInWithPassword } from '../oauth/sign-in.js';
import { checkPasswordStrength, createUser, UserInputError, userExists } from '../oauth/users.js';
import { createAccountPage, inviteSignInPage, joinedPage, joinPage, unusableInvitePage, wrongAccountPage, type InviteView } from './pages.js';

/**
 * {PUBLIC_URL}/invites/{token}: the page an invite link opens. The person signs in, or creates the
 * account of the invited address, and joins the workspace with the invite's role. Only the invited
 * address may use the link (docs/members.md). The forms post back here with the session's CSRF token;
 * the invite is looked up again on every request, so one used, revoked or expired meanwhile stops there.
 */

type OpenInvite = { invite: Invite & { tenant_name: string }; view: InviteView; session: BrowserSession; context: PageContext };

export async function showInvitePage(ctx: Koa.Context, db: Db, publicUrl: string, token: string): Promise<void> {
  const opened = await openInvite(ctx, db, publicUrl, pageHeaders(ctx), token);
  if (!opened) return;
  const { view, session, context } = opened;
  if (session.user) return showSignedIn(ctx, view, session.user.email, context);
  if (await userExists(db, view.email)) return answerPage(ctx, 200, inviteSignInPage(context, view));
  answerPage(ctx, 200, createAccountPage(context, view));
}

export async function submitInviteForm(ctx: Koa.Context, db: Db, publicUrl: string, token: string): Promise<void> {
  const styleNonce = pageHeaders(ctx);
  const form = await readPageForm(ctx);
  if (!form) return answerPage(ctx, 400, errorPage({ styleNonce }, 'Bad request', 'The form could not be read.'));
  const opened = await openInvite(ctx, db, publicUrl, styleNonce, token);
  if (!opened) return;
  const { invite, view, session, context } = opened;
  if (!isCsrfTokenValid(session, form.get('csrf_token') ?? undefined)) {
    return answerPage(ctx, 403, errorPage(context, 'Please try again', 'This form was not sent from this page, or it expired. Nothing was changed.', token));
  }

  switch (form.get('action')) {
    case 'sign_in': {
      const email = form.get('email') ?? '';
      const outcome = await signInWithPassword(ctx, db, publicUrl, session, email, form.get('password') ?? '');
      if (!outcome.ok) return answerPage(ctx, outcome.status, inviteSignInPage(context, view, { email, error: outcome.error }));
      return redirect(ctx, 303, token);
    }
    case 'create_account':
      return createAccount(ctx, db, publicUrl, view, session, context, form);
    case 'accept':
      if (!session.user) return answerPage(ctx, 200, inviteSignInPage(context, view, { error: 'Your session ended; sign in again.' }));
      if (session.user.email !== view.email) return answerPage(ctx, 403, wrongAccountPage(context, view, session.user.email));
      return accept(ctx, db, publicUrl, invite, session.user.id, context);
    case 'sign_out':
      await endSession(ctx, db, publicUrl, session);
      return redirect(ctx, 303, token);
    default:
      return answerPage(ctx, 400, errorPage(context, 'Bad request', 'The form has no known action.', token));
  }
}

/** The pending invite of this link with the browser's session, or undefined once its error page is answered. */
async function openInvite(ctx: Koa.Context, db: Db, publicUrl: string, styleNonce: string, token: string): Promise<OpenInvite | undefined> {
  const invite = await findInviteByToken(db, token);
  if (!invite) {
    answerPage(ctx, 404, errorPage({ styleNonce }, 'This invite link is not valid', 'Check that the whole link was copied, or ask the person who invited you for a new one.'));
    return undefined;
  }
  const status = inviteStatus(invite, oauthClock.now());
  if (status !== 'pending') {
    answerPage(ctx, 410, unusableInvitePage({ styleNonce }, status, invite.tenant_name));
    return undefined;
  }
  const session = await loadSession(ctx, db, publicUrl);
  const view = { token, email: invite.email, role: invite.role, workspace: invite.tenant_name };
  return { invite, view, session, context: { styleNonce, parameters: [], csrfToken: csrfToken(session) } };
}

function showSignedIn(ctx: Koa.Context, view: InviteView, email: string, context: PageContext): void {
  if (email !== view.email) return answerPage(ctx, 403, wrongAccountPage(context, view, email));
  answerPage(ctx, 200, joinPage(context, view, email));
}

/** Creates the invited address's account (never another one: the address is the invite's) and signs it in. */
async function createAccount(
  ctx: Koa.Context,
  db: Db,
  publicUrl: string,
  view: InviteView,
  session: BrowserSession,
  context: PageContext,
  form: URLSearchParams,
): Promise<void> {
  const password = form.get('password') ?? '';
  if (password !== (form.get('password_again') ?? '')) {
    return answerPage(ctx, 400, createAccountPage(context, view, { error: 'The two passwords differ.' }));
  }
  try {
    checkPasswordStrength(password);
  } catch (err) {
    if (err instanceof UserInputError) return answerPage(ctx, 400, createAccountPage(context, view, { error: `${capitalize(err.message)}.` }));
    throw err;
  }
  const user = await createUser(db, { email: view.email, password });
  if (!user) return answerPage(ctx, 409, inviteSignInPage(context, view, { error: `An account for ${view.email} exists already; sign in with its password.` }));
  // The account is seconds old; only a password set meanwhile through the CLI keeps it from a session.
  if (!(await startSession(ctx, db, publicUrl, session, user.id, user.passwordHash))) {
    return answerPage(ctx, 409, inviteSignInPage(context, view, { error: `The password of ${view.email} was changed meanwhile; sign in with it.` }));
  }
  redirect(ctx, 303, view.token);
}

/** Uses the invite up and makes the member, in one transaction: a second acceptance finds the invite used. */
async function accept(ctx: Koa.Context, db: Db, publicUrl: string, invite: Invite & { tenant_name: string }, userId: string, context: PageContext): Promise<void> {
  const joined = await withTenant(db, invite.tenant_id, async (tx) => {
    if (!(await markInviteAccepted(tx, invite.tenant_id, invite.id, userId, oauthClock.now()))) return undefined;
    return addMember(tx, invite.tenant_id, userId, invite.role);
  });
  if (!joined) return answerPage(ctx, 410, unusableInvitePage(context, 'accepted', invite.tenant_name));
  const consoleUrl = `${publicUrl.replace(/\/+$/, '')}/console`;
  answerPage(ctx, 200, joinedPage(context, { workspace: invite.tenant_name, role: joined.role, already: !joined.created, consoleUrl }));
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
