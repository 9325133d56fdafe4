import { integerSetting } from '../../db/integer-settings.js';

/** How many Chromiums this process runs at once, unless BROWSER_MAX_CONCURRENT says otherwise. */
export const DEFAULT_BROWSER_MAX_CONCURRENT = 2;

export function browserMaxConcurrentFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('BROWSER_MAX_CONCURRENT', env) ?? DEFAULT_BROWSER_MAX_CONCURRENT;
}

let running = 0;
const waiting: Array<() => void> = [];

/**
 * A place among the process's running Chromiums (each takes hundreds of MB): waits, within `signal`,
 * until one is free, so a burst of browser calls queues instead of exhausting the worker's memory.
 * The waiting counts against the call's time limit. Call the answer exactly once to give it back.
 */
export async function takeBrowserSlot(signal: AbortSignal): Promise<() => void> {
  const limit = browserMaxConcurrentFromEnv();
  signal.throwIfAborted();
  while (running >= limit) {
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = waiting.indexOf(wake);
        if (at >= 0) waiting.splice(at, 1);
        reject(signal.reason);
      };
      waiting.push(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
  running++;
  let given = false;
  return () => {
    if (given) return;
    given = true;
    running--;
    waiting.shift()?.();
  };
}
