/**
 * How long `wait_until` sleeps: until an ISO 8601 date-time (`until`), or for a duration (`duration`:
 * `"90s"`, `"5m"`, `"2h"`, `"1d"`, `"250ms"`, a number of milliseconds, or ISO 8601 such as `"PT1H30M"`).
 */
export function waitMilliseconds(args: Record<string, unknown>, now: number): number {
  if (typeof args.until === 'string') {
    const at = Date.parse(args.until);
    if (Number.isNaN(at)) throw new Error(`"until" is not an ISO 8601 date-time: ${args.until}`);
    return Math.max(0, at - now);
  }
  if (typeof args.duration === 'number' && args.duration >= 0) return args.duration;
  if (typeof args.duration === 'string') return parseDuration(args.duration);
  throw new Error('wait_until needs "until" (an ISO 8601 date-time) or "duration" (e.g. "30s" or "PT5M")');
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDuration(text: string): number {
  const simple = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (simple) return Number(simple[1]) * UNIT_MS[simple[2]!]!;
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text.trim());
  if (iso && text.trim() !== 'P' && text.trim() !== 'PT') {
    const [, d, h, m, s] = iso;
    return Number(d ?? 0) * UNIT_MS.d! + Number(h ?? 0) * UNIT_MS.h! + Number(m ?? 0) * UNIT_MS.m! + Number(s ?? 0) * 1000;
  }
  throw new Error(`"duration" is not a duration: ${text} (try "30s", "5m" or "PT5M")`);
}
