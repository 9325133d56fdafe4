import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { ApiError } from '../errors.js';
import type { Caller } from '../operation.js';

/**
 * How a tool call reaches its operation. `/mcp` authenticates the caller once (API key or OAuth access
 * token, with the token's RFC 8707 audience checked against `/mcp`), then sends the operation's REST
 * request to this same process, over HTTP, carrying a dispatch ticket instead of the bearer credential:
 * MCP servers must not pass their tokens through (a token issued for `/mcp` is, rightly, refused on
 * `/v1/...`), while the ticket stands for the caller already authenticated. A ticket is 256 random bits,
 * lives 60 s, works once, and exists only in this process's memory.
 *
 * The request then goes through the operations router like any other (access level, validation, the
 * tenant transaction, the handler), with the ticket's caller in place of `authenticate()`'s, so rate
 * limits, tenancy and error bodies apply exactly as over REST.
 */
export const DISPATCH_HEADER = 'X-Mcp-Dispatch';
const TICKET_LIFETIME_MS = 60_000;

export class DispatchTickets {
  private readonly tickets = new Map<string, { caller: Caller; expiresAt: number }>();

  issue(caller: Caller): string {
    const now = Date.now();
    for (const [ticket, entry] of this.tickets) if (entry.expiresAt <= now) this.tickets.delete(ticket);
    const ticket = randomBytes(32).toString('base64url');
    this.tickets.set(ticket, { caller, expiresAt: now + TICKET_LIFETIME_MS });
    return ticket;
  }

  /** The ticket's caller, once; undefined for an unknown, used or expired ticket. */
  take(ticket: string): Caller | undefined {
    const entry = this.tickets.get(ticket);
    if (!entry) return undefined;
    this.tickets.delete(ticket);
    return entry.expiresAt > Date.now() ? entry.caller : undefined;
  }
}

/**
 * Takes the dispatch ticket of a request from `/mcp` and leaves its caller in `ctx.state`, where the
 * operations router (api/router.ts) takes it in place of the bearer credential. Requests without a
 * ticket pass by untouched.
 */
export function dispatchedCaller(tickets: DispatchTickets): Koa.Middleware {
  return (ctx, next) => {
    const ticket = ctx.get(DISPATCH_HEADER);
    if (!ticket) return next();
    const caller = tickets.take(ticket);
    if (!caller) throw new ApiError('unauthorized', 'unknown, used or expired MCP dispatch ticket');
    ctx.state.dispatchedCaller = caller;
    return next();
  };
}
