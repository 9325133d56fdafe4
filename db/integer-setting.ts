/**
 * An integer setting from the environment, read at start: unset (or empty) is `fallback`; anything but
 * an integer of at least `min` fails the start naming the setting, rather than running with NaN.
 *
 * It lives in db/ because db/ imports nothing outside itself and everything else may import db/: the
 * database's pool sizes and the workers' settings share it.
 */
export function integerSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}, not '${raw}'`);
  }
  return value;
}
