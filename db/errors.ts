/** True for Postgres' unique_violation (23505), from pg or PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
