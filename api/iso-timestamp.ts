/**
 * A Date as the API shows every timestamp: `toISOString()`'s text (`2026-11-28T10:29:59.123Z`).
 *
 * Why: V8's `toISOString` breaks the time down through its date cache, ~3× slower than the arithmetic
 * below, and a list answers two or more timestamps per row: it was ~8 % of the API's CPU on
 * `GET /v1/agents` (docs/performance.md).
 *
 * How: the civil date from the day number (Howard Hinnant's `civil_from_days`), the time of day from
 * the remainder. Years outside 0000–9999 (`toISOString` writes them as ±YYYYYY) and invalid dates (it
 * throws) are left to `toISOString`.
 */
export function isoTimestamp(date: Date): string {
  const ms = date.getTime();
  if (!(ms >= MIN_FOUR_DIGIT_YEAR_MS && ms <= MAX_FOUR_DIGIT_YEAR_MS)) return date.toISOString();

  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const millis = rest - second * 1000;

  // civil_from_days: eras of 400 years starting on 0000-03-01, so that leap days end a year.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);

  return `${pad4(year)}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}.${pad3(millis)}Z`;
}

/** `isoTimestamp`, or null for no date. */
export function isoTimestampOrNull(date: Date | null | undefined): string | null {
  return date ? isoTimestamp(date) : null;
}

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
const MIN_FOUR_DIGIT_YEAR_MS = -62_167_219_200_000;
const MAX_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function pad3(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`;
}

function pad4(n: number): string {
  return n < 10 ? `000${n}` : n < 100 ? `00${n}` : n < 1000 ? `0${n}` : `${n}`;
}
