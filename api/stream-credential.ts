import type Koa from 'koa';
import type { Db } from '../db/database.js';
import { credentialStands } from './middleware/authenticate.js';
import type { Caller } from './operation.js';

/** An API key is looked up in the process's cache (a map lookup while it holds the key): every second. */
const API_KEY_RECHECK_MS = 1000;
/** An OAuth grant or a publishable key is a database read: every ten seconds, as the key cache's lifetime. */
const DATABASE_RECHECK_MS = 10_000;

/**
 * A REST event stream's access check (`allowed`, api/sse.ts): its bearer credential is asked again while
 * the stream lasts, and the stream ends once it no longer stands (revoked, rotated, the member removed;
 * `credentialStands`). A client that is still entitled resumes with Last-Event-ID and loses nothing.
 *
 * A tool call that `/mcp` dispatched carries a one-use ticket instead of the credential
 * (api/mcp/internal-router.ts): it is not asked again, as `/mcp` collects a stream for at most
 * MCP_STREAM_WAIT_MS (45 s by default) and then answers.
 */
export function credentialRecheck(koa: Koa.Context, db: Db, caller: Caller): (() => Promise<boolean>) | undefined {
  if (koa.state.dispatchedCaller) return undefined;
  const everyMs = caller.kind === 'publishable' || caller.userId !== undefined ? DATABASE_RECHECK_MS : API_KEY_RECHECK_MS;
  let checkedAt = Date.now();
  let stands = true;
  return async () => {
    if (stands && Date.now() - checkedAt >= everyMs) {
      stands = await credentialStands(koa, db, caller);
      checkedAt = Date.now();
    }
    return stands;
  };
}
