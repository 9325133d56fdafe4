import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { parseAuthorizationRequest, redirectLocation, type AuthorizationRequest } from './authorization-request.js';
import { approveAuthorization } from './grants.js';
import { readPageForm } from './http.js';
import { consentPage, errorPage, invalidRequestPage, noWorkspacePage, signInPage, type PageContext } from './pages.js';
import { csrfToken, endSession, isCsrfTokenValid, loadSession, type BrowserSession } from './sessions.js';
import { signInWithPassword } from './sign-in.js';
import { listWorkspaces } from './users.js';

/**
 * {app_url}/oauth/authorize: the page a person sees. GET shows sign-in or consent; the forms POST back
 * here with the authorization request's parameters, which are validated again on every request. A bad
 * request gets an error page and never a redirect, so the endpoint cannot be used to send anyone
 * anywhere — not even to an address its client registered — without their seeing the page first.
 */

export async function showAuthorizePage(ctx: Koa.Context, db: Db, publicUrl: string): Promise<void> {
  const styleNonce = pageHeaders(ctx);
  const opened = await openRequest(ctx, db, publicUrl, styleNonce, new URLSearchParams(ctx.querystring));
  if (!opened) return;
  const { request, session, context } = opened;
  if (!session.user) return answerPage(ctx, 200, signInPage(context, request.client));
  await showConsent(ctx, db, request, session, context);
}

export async function submitAuthorizeForm(ctx: Koa.Context, db: Db, publicUrl: string): Promise<void> {
  const styleNonce = pageHeaders(ctx);
  const form = await readPageForm(ctx);
  if (!form) return answerPage(ctx, 400, errorPage({ styleNonce }, 'Bad request', 'The form could not be read.'));
  const opened = await openRequest(ctx, db, publicUrl, styleNonce, form);
  if (!opened) return;
  const { request, session, context } = opened;
  const restart = `authorize?${new URLSearchParams(request.parameters)}`;
  if (!isCsrfTokenValid(session, form.get('csrf_token') ?? undefined)) {
    return answerPage(
      ctx,
      403,
      errorPage(context, 'Please try again', 'This form was not sent from this page, or it expired. Nothing was approved.', restart),
    );
  }

  switch (form.get('action')) {
    case 'sign_in':
      return signIn(ctx, db, publicUrl, request, session, context, form);
    case 'sign_out':
      await endSession(ctx, db, publicUrl, session);
      return redirect(ctx, 303, restart);
    case 'consent':
      if (!session.user) return answerPage(ctx, 200, signInPage(context, request.client, { error: 'Your session ended; sign in again.' }));
      return decide(ctx, db, publicUrl, request, session.user.id, context, form);
    default:
      return answerPage(ctx, 400, errorPage(context, 'Bad request', 'The form has no known action.', restart));
  }
}

/**
 * The authorization request in `parameters`, validated, with the browser's session and what its pages
 * need; undefined once a bad request has had its error page. Never a redirect: only a valid request
 * that the person has seen (consent) sends the browser to the client on its own.
 */
async function openRequest(
  ctx: Koa.Context,
  db: Db,
  publicUrl: string,
  styleNonce: string,
  parameters: URLSearchParams,
): Promise<{ request: AuthorizationRequest; session: BrowserSession; context: PageContext } | undefined> {
  const parsed = await parseAuthorizationRequest(db, parameters, publicUrl);
  if (parsed.kind === 'untrusted') {
    answerPage(ctx, 400, errorPage({ styleNonce }, 'This link cannot be used', parsed.message));
    return undefined;
  }
  if (parsed.kind === 'invalid') {
    answerPage(ctx, 400, invalidRequestPage({ styleNonce }, parsed));
    return undefined;
  }
  const { request } = parsed;
  allowFormToReach(ctx, styleNonce, request.redirectUri);

  const session = await loadSession(ctx, db, publicUrl);
  return { request, session, context: { styleNonce, parameters: request.parameters, csrfToken: csrfToken(session) } };
}

async function showConsent(ctx: Koa.Context, db: Db, request: AuthorizationRequest, session: BrowserSession, context: PageContext): Promise<void> {
  const user = session.user!;
  const workspaces = await listWorkspaces(db, user.id);
  if (workspaces.length === 0) return answerPage(ctx, 403, noWorkspacePage(context, user.email));
  answerPage(ctx, 200, consentPage(context, { client: request.client, redirectUri: request.redirectUri, user, workspaces }));
}

async function signIn(
  ctx: Koa.Context,
  db: Db,
  publicUrl: string,
  request: AuthorizationRequest,
  session: BrowserSession,
  context: PageContext,
  form: URLSearchParams,
): Promise<void> {
  const email = form.get('email') ?? '';
  const outcome = await signInWithPassword(ctx, db, publicUrl, session, email, form.get('password') ?? '');
  if (!outcome.ok) return answerPage(ctx, outcome.status, signInPage(context, request.client, { email, error: outcome.error }));
  redirect(ctx, 303, `authorize?${new URLSearchParams(request.parameters)}`);
}

async function decide(
  ctx: Koa.Context,
  db: Db,
  publicUrl: string,
  request: AuthorizationRequest,
  userId: string,
  context: PageContext,
  form: URLSearchParams,
): Promise<void> {
  const decision = form.get('decision');
  if (decision === 'deny') {
    return redirect(ctx, 303, redirectLocation(request.redirectUri, publicUrl, { error: 'access_denied', error_description: 'the user denied access', state: request.state }));
  }
  if (decision !== 'approve') return answerPage(ctx, 400, errorPage(context, 'Bad request', 'Choose Approve or Deny.'));
  // The picker only offers the user's workspaces; the server decides what the user may choose.
  const tenantId = form.get('tenant_id') ?? '';
  const workspaces = await listWorkspaces(db, userId);
  if (!workspaces.some((workspace) => workspace.id === tenantId)) {
    return answerPage(ctx, 403, errorPage(context, 'Not your workspace', 'You are not a member of the chosen workspace. Nothing was approved.'));
  }
  const code = await approveAuthorization(db, request, userId, tenantId);
  redirect(ctx, 303, redirectLocation(request.redirectUri, publicUrl, { code, state: request.state }));
}

/**
 * Headers of every page: no framing (clickjacking), no caching, no referrer (the URL holds the request),
 * and a Content-Security-Policy that lets nothing run. Answers the nonce of the page's style block.
 */
export function pageHeaders(ctx: Koa.Context): string {
  const styleNonce = randomBytes(16).toString('base64');
  ctx.set('Content-Security-Policy', contentSecurityPolicy(styleNonce, []));
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  return styleNonce;
}

/** Browsers apply form-action to the redirect that follows a form post, so the client's address must be allowed. */
function allowFormToReach(ctx: Koa.Context, styleNonce: string, redirectUri: string): void {
  const url = new URL(redirectUri);
  const source = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  ctx.set('Content-Security-Policy', contentSecurityPolicy(styleNonce, [source]));
}

/** `extra`: further directives, e.g. the console's nonce'd script and its same-origin event streams. */
export function contentSecurityPolicy(styleNonce: string, formTargets: string[], extra: string[] = []): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${styleNonce}'`,
    ...extra,
    `form-action 'self' ${formTargets.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function answerPage(ctx: Koa.Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** 302 answers a GET, 303 a form post (so the browser follows with a GET). */
export function redirect(ctx: Koa.Context, status: 302 | 303, location: string): void {
  ctx.status = status;
  ctx.set('Location', location);
  ctx.body = '';
}
