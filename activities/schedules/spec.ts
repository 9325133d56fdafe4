/**
 * The timing fields of a schedule, checked before anything is written: a 5-field cron expression (or an
 * `@hourly`-style shorthand), an `every` duration, a jitter, an IANA time zone. What passes here is a
 * subset of what Temporal's schedule spec accepts (service/worker/scheduler/calendar.go), so a schedule
 * refused by Temporal after these checks is a bug, not a user's mistake. Each check answers why it fails,
 * or undefined.
 */

/** The shorthands Temporal expands, each to its 5 fields. */
const CRON_SHORTHANDS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Names allowed in place of numbers (Temporal takes any prefix of at least `prefix` letters), and the number of the first. */
  names?: { list: string[]; first: number; prefix: number };
}

const CRON_FIELDS: CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: { list: MONTHS, first: 1, prefix: 3 } },
  // 0 and 7 are both Sunday.
  { name: 'day of week', min: 0, max: 7, names: { list: DAYS, first: 0, prefix: 2 } },
];

/** Why `cron` is not a schedule's cron expression, or undefined when it is. */
export function cronProblem(cron: string): string | undefined {
  const trimmed = cron.trim();
  if (trimmed.startsWith('@every')) return 'use `every` for an interval';
  if (/^(CRON_)?TZ=/.test(trimmed)) return 'use `time_zone` for the time zone';
  if (trimmed.startsWith('@')) {
    return CRON_SHORTHANDS[trimmed] ? undefined : `unknown shorthand '${trimmed}' (${Object.keys(CRON_SHORTHANDS).join(', ')})`;
  }
  const fields = trimmed.split(/\s+/);
  if (fields.length !== 5) return `expected 5 fields (minute hour day-of-month month day-of-week), found ${trimmed === '' ? 0 : fields.length}`;
  for (const [index, field] of fields.entries()) {
    const problem = cronFieldProblem(field, CRON_FIELDS[index]!);
    if (problem) return `${CRON_FIELDS[index]!.name} '${field}': ${problem}`;
  }
  return undefined;
}

/** `*`, `v`, `a-b`, each optionally `/step`, separated by commas. */
function cronFieldProblem(field: string, spec: CronField): string | undefined {
  for (const part of field.split(',')) {
    const [range, step, extra] = part.split('/');
    if (extra !== undefined) return 'more than one /';
    if (step !== undefined && !/^[1-9][0-9]{0,2}$/.test(step)) return `step '${step}' is not a positive integer`;
    if (range === '*') continue;
    const bounds = range!.split('-');
    if (bounds.length > 2) return `'${range}' is not a value or a range`;
    const start = cronValue(bounds[0]!, spec);
    if (typeof start === 'string') return start;
    if (bounds.length === 2) {
      const end = cronValue(bounds[1]!, spec);
      if (typeof end === 'string') return end;
      if (end < start) return `range '${range}' ends before it starts`;
    }
  }
  return undefined;
}

function cronValue(text: string, spec: CronField): number | string {
  if (/^[0-9]{1,2}$/.test(text)) {
    const value = Number(text);
    return value >= spec.min && value <= spec.max ? value : `${value} is out of range ${spec.min}-${spec.max}`;
  }
  const names = spec.names;
  if (names && /^[a-z]+$/i.test(text) && text.length >= names.prefix) {
    const index = names.list.findIndex((name) => name.startsWith(text.toLowerCase()));
    if (index >= 0) return index + names.first;
  }
  return `'${text}' is not a ${spec.name}`;
}

const SECOND = 1000;
const UNITS: Record<string, number> = { d: 86_400 * SECOND, h: 3_600 * SECOND, m: 60 * SECOND, s: SECOND };

/** The longest `every` or jitter: a year. */
export const MAX_DURATION_MS = 366 * UNITS.d!;

/** `1h30m`-style (units d, h, m, s, largest first) or ISO 8601 (`PT1H30M`, `P1D`): the JSON Schema pattern of a duration. */
export const DURATION_PATTERN = '^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$|^P([0-9]+D)?(T([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$';

/** A duration in milliseconds, or undefined when `text` is none (see DURATION_PATTERN). */
export function parseDuration(text: string): number | undefined {
  const compact = /^(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$/.exec(text);
  const iso = compact ? undefined : /^P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?$/.exec(text);
  const match = compact ?? iso;
  // `P`, `PT` and the empty string name no amount at all.
  if (!match || match.slice(1).every((group) => group === undefined)) return undefined;
  if (iso && text.endsWith('T')) return undefined;
  const [days, hours, minutes, seconds] = match.slice(1).map((group) => Number(group ?? 0));
  return days! * UNITS.d! + hours! * UNITS.h! + minutes! * UNITS.m! + seconds! * UNITS.s!;
}

/** Why `every` is not a schedule's interval (at least a second, at most a year), or undefined. */
export function everyProblem(every: string): string | undefined {
  const ms = parseDuration(every);
  if (ms === undefined) return "not a duration such as '30s', '5m', '1h30m', '1d' or 'PT1H'";
  if (ms < SECOND) return 'the shortest interval is 1s';
  if (ms > MAX_DURATION_MS) return 'the longest interval is 366d';
  return undefined;
}

/** Why `jitter` is not a schedule's jitter (0 to a year), or undefined. */
export function jitterProblem(jitter: string): string | undefined {
  const ms = parseDuration(jitter);
  if (ms === undefined) return "not a duration such as '0s', '30s', '5m' or 'PT10S'";
  if (ms > MAX_DURATION_MS) return 'the longest jitter is 366d';
  return undefined;
}

/**
 * Why `name` is not an IANA time zone name the Temporal server will load, or undefined. Node's time zone
 * data answers whether the zone exists; the name must be spelled as the tz database spells it (the server
 * looks it up case-sensitively), and UTC offsets such as `+01:00`, which Node accepts, are no zone names.
 */
export function timeZoneProblem(name: string): string | undefined {
  const unknown = `'${name}' is not an IANA time zone name such as 'UTC' or 'Europe/Paris'`;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return unknown;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return unknown;
  }
  // Node resolves names case-insensitively ('europe/paris' → 'Europe/Paris'); the server does not.
  if (resolved.toLowerCase() === name.toLowerCase() && resolved !== name) return `${unknown} (did you mean '${resolved}'?)`;
  if (isIcuOnlyName(name)) return resolved !== name ? `${unknown} (did you mean '${resolved}'?)` : unknown;
  return undefined;
}

/**
 * ICU's own links, which Node resolves ('PST' → America/Los_Angeles) and the tz database, which the
 * Temporal server reads, does not have: the Java-era three-letter ids and SystemV/* (icu4c's
 * tools/tzcode/icuzones). EST, MST and HST are in the tz database and are not among them. Other names
 * the two disagree on (links the tz database has since dropped) are still refused by the server.
 */
const ICU_ONLY_NAMES = new Set(['ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST', 'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST']);

function isIcuOnlyName(name: string): boolean {
  return ICU_ONLY_NAMES.has(name.toUpperCase()) || /^systemv\//i.test(name);
}
