import type Koa from 'koa';
import type { Db } from '../db/database.js';
import { credentialStands } from './middleware/authenticate.js';
import type { Caller } from './operation.js';
import type { StreamAccess } from './sse.js';

/** An API key is looked up in the process's cache (a map lookup while it holds the key): every second. */
const API_KEY_RECHECK_MS = 1000;
/**
 * An OAuth grant or a publishable key is a database read: every five seconds, and one read answers every
 * stream of that credential in this process for as long. A publishable key is public, and its visitors
 * may hold thousands of streams: they cost one read per key, not one per stream.
 */
const DATABASE_RECHECK_MS = 5000;
/** Answers kept before stale ones are swept out (each is a few hundred bytes). */
const SWEEP_ABOVE = 1000;

const sharedAnswers = new Map<string, { at: number; stands: Promise<boolean> }>();

/**
 * A REST event stream's access check (api/sse.ts): its bearer credential is asked again while the stream
 * lasts, and the stream ends once it no longer stands (revoked, rotated, the member removed, a
 * visitor's origin taken off the deployment's list; `credentialStands`). A client that is still entitled resumes with Last-Event-ID and loses nothing.
 *
 * A tool call that `/mcp` dispatched carries a one-use ticket instead of the credential
 * (api/mcp/internal-router.ts): it is not asked again, as `/mcp` collects a stream for at most
 * MCP_STREAM_WAIT_MS (45 s by default) and then answers.
 */
export function credentialRecheck(koa: Koa.Context, deps: { db: Db; publicUrl?: string }, caller: Caller): StreamAccess | undefined {
  if (koa.state.dispatchedCaller) return undefined;
  const ask = () => credentialStands(koa, deps.db, caller, deps.publicUrl);
  if (caller.kind !== 'publishable' && caller.userId === undefined) return { everyMs: API_KEY_RECHECK_MS, stands: ask };
  // A visitor's answer depends on the page's origin too (the deployment's allowed_origins).
  const key = `${caller.keyId}\n${koa.get('Authorization')}\n${koa.get('Origin')}`;
  return { everyMs: DATABASE_RECHECK_MS, stands: () => sharedAnswer(key, ask) };
}

function sharedAnswer(key: string, ask: () => Promise<boolean>): Promise<boolean> {
  const now = Date.now();
  const recent = sharedAnswers.get(key);
  if (recent && now - recent.at < DATABASE_RECHECK_MS) return recent.stands;
  if (sharedAnswers.size >= SWEEP_ABOVE) {
    for (const [staleKey, answer] of sharedAnswers) if (now - answer.at >= DATABASE_RECHECK_MS) sharedAnswers.delete(staleKey);
  }
  const stands = ask();
  const answer = { at: now, stands };
  sharedAnswers.set(key, answer);
  // A failed read (the database away) is not an answer: the next stream asks again.
  stands.catch(() => {
    if (sharedAnswers.get(key) === answer) sharedAnswers.delete(key);
  });
  return stands;
}
