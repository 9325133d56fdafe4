import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { oauthClock, secondsFromNow } from './clock.js';
import { LIFETIMES } from './lifetimes.js';
import { isLoopbackHost } from './redirect-uris.js';
import { hmacBase64Url, randomSecret, safeEqual, sha256Hex } from './secrets.js';

/**
 * The consent page's browser session. The cookie holds a random value; a signed-in session is a row
 * keyed by that value's hash. A visitor who has not signed in still gets a cookie (with no row), so the
 * sign-in form has a CSRF token bound to something only that browser holds.
 */

export interface BrowserSession {
  /** The cookie's value: the session's secret. */
  secret: string;
  user: { id: string; email: string } | undefined;
}

/** HttpOnly, SameSite=Lax, and Secure (with the __Host- prefix) unless the service is on a loopback http address. */
function cookieSettings(publicUrl: string): { name: string; attributes: string } {
  const url = new URL(publicUrl);
  const secure = url.protocol === 'https:' || !isLoopbackHost(url.hostname);
  return secure
    ? { name: '__Host-agent_platform_session', attributes: 'Path=/; HttpOnly; SameSite=Lax; Secure' }
    : { name: 'agent_platform_session', attributes: 'Path=/; HttpOnly; SameSite=Lax' };
}

/** The request's session; a visitor without a usable cookie gets a fresh anonymous one. */
export async function loadSession(ctx: Koa.Context, db: Db, publicUrl: string): Promise<BrowserSession> {
  const secret = ctx.cookies.get(cookieSettings(publicUrl).name);
  if (!secret || !/^[A-Za-z0-9]{43}$/.test(secret)) {
    const fresh = randomSecret();
    setCookie(ctx, publicUrl, fresh);
    return { secret: fresh, user: undefined };
  }
  const user = await db
    .selectFrom('user_sessions')
    .innerJoin('users', 'users.id', 'user_sessions.user_id')
    .select(['users.id', 'users.email'])
    .where('user_sessions.token_hash', '=', sha256Hex(secret))
    .where('user_sessions.expires_at', '>', oauthClock.now())
    .executeTakeFirst();
  return { secret, user };
}

/** Whether the session is still `userId`'s (not signed out, not expired): what a long-lived console stream re-checks. */
export async function isSessionOf(db: Db, session: BrowserSession, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_sessions')
    .select('user_id')
    .where('token_hash', '=', sha256Hex(session.secret))
    .where('expires_at', '>', oauthClock.now())
    .executeTakeFirst();
  return row?.user_id === userId;
}

/**
 * Signs the user in under a new cookie value: the old value (which a page on another site might have
 * planted) never becomes a signed-in session. Only while the stored password hash is still
 * `passwordHash`, the one just checked: a password changed meanwhile has signed the person out
 * everywhere (upsertUser), and the old password must not start a session after that. Whether it did.
 */
export async function startSession(ctx: Koa.Context, db: Db, publicUrl: string, previous: BrowserSession, userId: string, passwordHash: string): Promise<boolean> {
  const secret = randomSecret();
  const started = await db
    .insertInto('user_sessions')
    .columns(['token_hash', 'user_id', 'expires_at'])
    .expression((eb) =>
      eb
        .selectFrom('users')
        .select([eb.val(sha256Hex(secret)).as('token_hash'), 'users.id', eb.val(secondsFromNow(LIFETIMES.session)).as('expires_at')])
        .where('users.id', '=', userId)
        .where('users.password_hash', '=', passwordHash),
    )
    .executeTakeFirst();
  if (!(started.numInsertedOrUpdatedRows! > 0n)) return false;
  await db
    .deleteFrom('user_sessions')
    .where((eb) => eb.or([eb('token_hash', '=', sha256Hex(previous.secret)), eb('expires_at', '<=', oauthClock.now())]))
    .execute();
  setCookie(ctx, publicUrl, secret);
  return true;
}

export async function endSession(ctx: Koa.Context, db: Db, publicUrl: string, session: BrowserSession): Promise<void> {
  await db.deleteFrom('user_sessions').where('token_hash', '=', sha256Hex(session.secret)).execute();
  setCookie(ctx, publicUrl, randomSecret());
}

/** Signs the user out of every browser (their password changed). Runs in the caller's transaction. */
export async function endEverySessionOf(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
}

/** The token every form of this session carries: only a page that could read our HTML knows it. */
export function csrfToken(session: BrowserSession): string {
  return hmacBase64Url(session.secret, 'agent-platform oauth csrf');
}

export function isCsrfTokenValid(session: BrowserSession, submitted: string | undefined): boolean {
  return submitted !== undefined && safeEqual(submitted, csrfToken(session));
}

function setCookie(ctx: Koa.Context, publicUrl: string, secret: string): void {
  const { name, attributes } = cookieSettings(publicUrl);
  // Written by hand: Koa refuses a Secure cookie on a plain-http hop, which is normal behind a TLS proxy.
  ctx.append('Set-Cookie', `${name}=${secret}; Max-Age=${LIFETIMES.session}; ${attributes}`);
}
