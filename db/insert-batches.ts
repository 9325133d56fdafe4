/**
 * Rows of a multi-row INSERT, in slices that each stay within one statement's bind parameters.
 *
 * Postgres' protocol counts a statement's parameters in 16 bits (at most 65,535), and PGlite 0.4 broke
 * its connection (every later statement failed) on 35,000: a slice carries at most 32,767, whatever
 * the backend. Every row binds one value per key of the first row.
 */
const MAX_PARAMETERS_PER_STATEMENT = 32_767;

export function* insertBatches<T extends object>(rows: readonly T[]): Generator<T[]> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS_PER_STATEMENT / Object.keys(rows[0]!).length));
  for (let start = 0; start < rows.length; start += perStatement) yield rows.slice(start, start + perStatement);
}
