import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { clientAddress } from '../client-address.js';
import { FAILED_SIGN_INS_PER_ADDRESS, FAILED_SIGN_INS_PER_EMAIL, refundAttempts, takeAttempts } from './rate-limit.js';
import { startSession, type BrowserSession } from './sessions.js';
import { checkCredentials, normalizeEmail } from './users.js';

export type SignInOutcome = { ok: true } | { ok: false; status: 401 | 429; error: string };

/**
 * Checks an e-mail and password against the failed-attempt limits and, when right, signs the browser
 * in under a new cookie. What the consent page and the console's sign-in forms share. A 429 has set
 * Retry-After.
 */
export async function signInWithPassword(ctx: Koa.Context, db: Db, publicUrl: string, session: BrowserSession, email: string, password: string): Promise<SignInOutcome> {
  // Counted as a failure before the password is checked, in one step with the check of the limit, so
  // parallel guesses cannot all pass the check before the first failure is recorded; a right password
  // takes its attempt back.
  const attempts = [
    { limit: FAILED_SIGN_INS_PER_EMAIL, subject: safeEmailKey(email) },
    { limit: FAILED_SIGN_INS_PER_ADDRESS, subject: clientAddress(ctx.ip) },
  ];
  const { wait, at } = await takeAttempts(db, attempts);
  if (wait > 0) {
    ctx.set('Retry-After', String(wait));
    return { ok: false, status: 429, error: `Too many failed attempts. Try again in ${Math.ceil(wait / 60)} minutes.` };
  }
  const user = await checkCredentials(db, email, password);
  if (!user) return { ok: false, status: 401, error: 'Wrong e-mail or password.' };
  // Not signed in when the password changed since it was checked (the same answer as a wrong one).
  if (!(await startSession(ctx, db, publicUrl, session, user.id, user.passwordHash))) return { ok: false, status: 401, error: 'Wrong e-mail or password.' };
  await refundAttempts(db, attempts, at);
  return { ok: true };
}

/** Failed attempts are counted per normalized e-mail; something that is not one is counted as itself. */
function safeEmailKey(email: string): string {
  try {
    return normalizeEmail(email);
  } catch {
    return email.slice(0, 254);
  }
}
