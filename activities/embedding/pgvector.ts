/**
 * The pgvector text literal of a vector, `[0.1,0.2,...]`, for `$1::vector` parameters (Postgres and
 * PGlite alike). Accepts `Float32Array` (which `pgvector`'s own `toSql` rejects) and number arrays.
 * Every component must be finite as a float4, as pgvector requires; an empty vector is refused too.
 * Components are written with as few significant digits (at most 9) as read back as the same float4,
 * which is what pgvector stores, so the literal is about half as long as printing the doubles.
 */
export function toPgVector(vector: ArrayLike<number>): string {
  const length = vector.length;
  if (!Number.isInteger(length) || length < 1) throw new TypeError('a pgvector needs at least one dimension');
  const parts = new Array<string>(length);
  for (let i = 0; i < length; i++) {
    const value = vector[i];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new TypeError(`vector component ${i} is not a finite number: ${String(value)}`);
    }
    parts[i] = float32Text(value, i);
  }
  return `[${parts.join(',')}]`;
}

/** A short decimal (at most 9 significant digits) that parses back to the float4 nearest `value`. */
function float32Text(value: number, index: number): string {
  const single = Math.fround(value);
  if (!Number.isFinite(single)) throw new TypeError(`vector component ${index} is out of float4 range: ${value}`);
  for (let digits = 6; digits < 9; digits++) {
    const text = String(Number(single.toPrecision(digits)));
    if (Math.fround(Number(text)) === single) return text;
  }
  return String(Number(single.toPrecision(9)));
}
