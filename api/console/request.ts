import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { isDatabaseUnreachable } from '../../db/errors.js';
import type { AppDeps } from '../deps.js';
import type { Reply } from '../operation.js';
import { readBodyUpTo } from '../read-body.js';
import { answerPage, contentSecurityPolicy, pageHeaders } from '../oauth/authorize-endpoint.js';
import { csrfToken, isCsrfTokenValid, isSessionOf, loadSession, type BrowserSession } from '../oauth/sessions.js';
import { listWorkspaces, type Workspace } from '../oauth/users.js';
import { unstorableTextParameters } from '../unstorable-text.js';
import { OpenResponseCounts } from '../open-response-counts.js';
import { messagePage, signInPage, type ConsolePageContext, type SignedInContext } from './layout.js';

/**
 * The plumbing every console request goes through: the consent page's headers (plus the console's
 * nonce'd script and same-origin event streams), the browser session, the person's workspaces, CSRF
 * checks on posts, and error pages instead of the API's JSON errors.
 */

export interface Person {
  user: { id: string; email: string };
  /** Every workspace the person is a member of, read on each request (a removed member loses it at once). */
  workspaces: Workspace[];
}

export interface ConsoleRequest {
  ctx: Koa.Context;
  deps: AppDeps;
  session: BrowserSession;
  page: ConsolePageContext;
}

export interface SignedInRequest extends ConsoleRequest {
  person: Person;
  /** The page context with the person's header; `current` is the switcher's workspace, when one is chosen. */
  signedIn(current?: Workspace): SignedInContext;
}

/** Forms carry answers of up to 200,000 characters (as POST /v1/runs/{id}/answer takes): url-encoded CJK is 9 bytes each. */
const FORM_LIMIT = 2 * 1024 * 1024;
/** Event streams one browser session may hold open at once (each costs a connection and a poll loop). */
const STREAMS_PER_SESSION = 10;
/** A path id longer than any of ours is no id: answered 404 without asking the database. */
const MAX_ID_LENGTH = 200;

/** Open event streams per browser session. */
const openStreams = new OpenResponseCounts();

/** Serves an HTML page or form post: `work` runs with the session; any failure is an error page. */
export function consoleRoute(deps: AppDeps, work: (request: ConsoleRequest) => Promise<void>): Koa.Middleware {
  return async (ctx) => {
    const nonce = pageHeaders(ctx);
    ctx.set('Content-Security-Policy', contentSecurityPolicy(nonce, [], [`script-src 'nonce-${nonce}'`, "connect-src 'self'"]));
    let page: ConsolePageContext = { nonce, csrfToken: '' };
    try {
      const session = await loadSession(ctx, deps.db, deps.publicUrl);
      page = { nonce, csrfToken: csrfToken(session) };
      await work({ ctx, deps, session, page });
    } catch (err) {
      if (isDatabaseUnreachable(err)) {
        ctx.set('Retry-After', '5');
        return answerPage(ctx, 503, messagePage(page, 'Briefly unavailable', 'The service cannot reach its database. Try again in a moment.'));
      }
      console.error(`[console] ${ctx.state.requestId} ${ctx.method} ${ctx.path} failed:`, err);
      answerPage(ctx, 500, messagePage(page, 'Something went wrong', 'The page could not be shown. Try again.'));
    }
  };
}

/**
 * The same for pages only a signed-in person sees: anyone else gets the sign-in form (GET) or a 401
 * (a post, an event stream), and a person in no workspace a page saying so.
 */
export function signedInRoute(deps: AppDeps, work: (request: SignedInRequest) => Promise<void>): Koa.Middleware {
  return consoleRoute(deps, async (request) => {
    const { ctx, session, page } = request;
    if (!session.user) {
      if (ctx.method !== 'GET' || ctx.path.endsWith('/events')) {
        return answerText(ctx, 401, 'Sign in first.');
      }
      return answerPage(ctx, 200, signInPage(page, ctx.originalUrl));
    }
    const person: Person = { user: session.user, workspaces: await listWorkspaces(request.deps.db, session.user.id) };
    const signedIn = (current?: Workspace): SignedInContext => ({ ...page, email: person.user.email, workspaces: person.workspaces, current });
    if (person.workspaces.length === 0) {
      return answerPage(ctx, 403, messagePage(page, 'No workspace', `${person.user.email} is not a member of any workspace yet. Ask an administrator to invite you.`));
    }
    if (ctx.path.endsWith('/events') && openStreams.hold(ctx, [{ subject: session.secret, limit: STREAMS_PER_SESSION }])) {
      return answerText(ctx, 429, `At most ${STREAMS_PER_SESSION} console pages may follow live at once; close some.`);
    }
    await work({ ...request, person, signedIn });
  });
}

/**
 * What a live stream re-checks before each look: the session still signed in as the person (not signed
 * out, not expired) and their workspaces now; undefined when the session ended or, with `tenantId`,
 * the person is no longer a member of that workspace (the stream then ends).
 */
export async function currentWorkspaces(request: SignedInRequest, tenantId?: string): Promise<Workspace[] | undefined> {
  const { deps, session, person } = request;
  if (!(await isSessionOf(deps.db, session, person.user.id))) return undefined;
  const workspaces = await listWorkspaces(deps.db, person.user.id);
  if (tenantId !== undefined && !workspaces.some((w) => w.id === tenantId)) return undefined;
  return workspaces;
}

/**
 * A form post's fields, after its CSRF token is checked; undefined once the refusal is answered.
 * Only urlencoded forms; a repeated field is refused (no field of ours repeats).
 */
export async function readCheckedForm(request: ConsoleRequest): Promise<Map<string, string> | undefined> {
  const { ctx, session } = request;
  let body: Buffer;
  try {
    body = await readBodyUpTo(ctx, FORM_LIMIT, () => new Error('too large'));
  } catch {
    answerText(ctx, 413, `The form is limited to ${FORM_LIMIT} bytes.`);
    return undefined;
  }
  if (!ctx.is('application/x-www-form-urlencoded')) {
    answerText(ctx, 400, 'The form must be sent as application/x-www-form-urlencoded.');
    return undefined;
  }
  const params = new URLSearchParams(body.toString('utf8'));
  const fields = new Map<string, string>();
  for (const [name, value] of params) {
    if (fields.has(name)) {
      answerText(ctx, 400, `The field '${name}' is repeated.`);
      return undefined;
    }
    fields.set(name, value);
  }
  if (unstorableTextParameters(params).length > 0) {
    answerText(ctx, 400, 'The form holds U+0000 or a lone surrogate, which cannot be stored.');
    return undefined;
  }
  if (!isCsrfTokenValid(session, fields.get('csrf_token'))) {
    answerText(ctx, 403, 'This form was not sent from a console page, or it expired. Reload the page and try again.');
    return undefined;
  }
  return fields;
}

/** Whether the post came from the console's script (answered briefly), not a plain form (answered with a page). */
export function isBackgroundPost(ctx: Koa.Context): boolean {
  return ctx.get('X-Requested-With') === 'fetch';
}

/** Where a form may send the browser next: only a console path of this service, never another site. */
export function safeNext(next: string | undefined): string {
  return next && /^\/console(?:[/?]|$)/.test(next) && !next.startsWith('//') && !/[\\\r\n]/.test(next) ? next : '/console';
}

export function answerText(ctx: Koa.Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = body;
}

/** Sends an event-stream reply (api/sse.ts) through Koa. */
export function sendStream(ctx: Koa.Context, reply: Reply): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  ctx.status = reply.status;
  ctx.body = reply.body;
}

/**
 * Finds the row `id` names in whichever of the person's workspaces holds it; undefined when none does
 * (a 404 page). An id no row can have (U+0000, which Postgres refuses, or far too long) is looked up nowhere.
 */
export async function findInWorkspaces<T>(
  db: Db,
  person: Person,
  id: string,
  find: (db: Db, tenantId: string) => Promise<T | undefined>,
): Promise<{ workspace: Workspace; row: T } | undefined> {
  if (id.includes('\0') || id.length > MAX_ID_LENGTH) return undefined;
  for (const workspace of person.workspaces) {
    const row = await find(db, workspace.id);
    if (row !== undefined) return { workspace, row };
  }
  return undefined;
}
