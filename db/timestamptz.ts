/**
 * Postgres `timestamptz` text as a Date, the way node-postgres' own parser (postgres-date) reads it.
 *
 * Why: every row the API lists carries two or more timestamps, and postgres-date matches each against
 * three regular expressions, about five times what reading the digits takes. Reading and writing
 * timestamps came to ~15 % of the API's CPU on `GET /v1/agents` (docs/performance.md).
 *
 * How: what Postgres sends with its default DateStyle (ISO) — `2026-11-28 10:29:59.123456+00`, the
 * offset in whole hours or hours and minutes — is read digit by digit; the fraction is cut to
 * milliseconds as postgres-date cuts it. Anything else (an offset with seconds, a year past 9999 or
 * before 1000, BC, `infinity`, another DateStyle) is left to node-postgres' parser (db/database.ts).
 */
export function readIsoTimestamptz(text: string): Date | undefined {
  if (text.length < 22 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH || text.charCodeAt(10) !== SPACE) return undefined;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;

  let i = 19;
  let millis = 0;
  if (text.charCodeAt(i) === DOT) {
    const start = ++i;
    // The first three digits are the milliseconds (`.5` is 500); the rest is cut, as postgres-date cuts it.
    for (let scale = 100; isDigit(text.charCodeAt(i)); i++, scale /= 10) {
      if (scale >= 1) millis += (text.charCodeAt(i) - 48) * scale;
    }
    if (i === start) return undefined;
  }

  const sign = text.charCodeAt(i);
  if (sign !== PLUS && sign !== DASH) return undefined;
  const offsetHours = digits(text, i + 1, 2);
  let offsetMinutes = 0;
  let end = i + 3;
  if (text.charCodeAt(end) === COLON) {
    offsetMinutes = digits(text, end + 1, 2);
    end += 3;
  }
  if (end !== text.length || offsetHours < 0 || offsetMinutes < 0) return undefined;

  const offsetMs = (sign === PLUS ? 1 : -1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMs);
}

const DASH = 45;
const PLUS = 43;
const SPACE = 32;
const COLON = 58;
const DOT = 46;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The `length` digits at `start` as a number, or -1 when one of them is not a digit. */
function digits(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - 48);
  }
  return value;
}
