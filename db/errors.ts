/** True for Postgres' unique_violation (23505), from pg or PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/**
 * Postgres SQLSTATEs that mean the server is not there for us: connection exceptions (class 08, but for
 * 08P01 protocol_violation, a bug), the shutdown codes of 57P, and too_many_connections (failovers).
 */
const UNREACHABLE_SQLSTATE = /^08(?!P01)|^57P0[1-3]$|^53300$/;
/** Socket errors of a connection that could not be made or was cut. */
const UNREACHABLE_SOCKET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when a query failed because the database could not be reached (down, restarting, failing over,
 * or the connection cut), not because of the query: worth answering 503 and retrying, not a bug.
 * node-postgres reports a cut connection (and a client it left unusable) only by its message.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_SOCKET.has(code))) return true;
  // pg's own words for a cut connection, and for a pooled client that the cut left unusable.
  return typeof message === 'string' && /^Connection terminated|is not queryable$|timeout exceeded when trying to connect/.test(message);
}
