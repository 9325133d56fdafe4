import { checkIntegerSettings } from '../db/integer-settings.js';

/** How long a stop may take before the process exits without finishing it. */
const STOP_DEADLINE_MS = 60_000;

/**
 * Runs one of the platform's long-lived processes (the API, a worker, `npm start`): `start` brings it up
 * and answers how to stop it. SIGINT or SIGTERM stops it once and exits 0 (1 when the stop has not ended
 * within STOP_DEADLINE_MS); a start that fails exits 1 with the reason. Every integer setting is checked
 * first, so a bad one stops the start whichever part of the process reads it, and however late.
 */
export function runProcess(label: string, start: () => Promise<() => Promise<void>>): void {
  const checkedStart = async () => {
    checkIntegerSettings();
    return start();
  };
  checkedStart().then(
    (stop) => {
      let stopping = false;
      const shutdown = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        console.log(`[${label}] ${signal}: stopping...`);
        // A stop that never ends (a workflow activation stuck in its thread, which the workers then wait
        // for: workers/activation-watchdog.ts) must not leave the process deaf to signals until a SIGKILL.
        setTimeout(() => {
          console.error(`[${label}] not stopped after ${STOP_DEADLINE_MS / 1000} s: exiting anyway`);
          process.exit(1);
        }, STOP_DEADLINE_MS).unref();
        await stop();
        console.log(`[${label}] stopped`);
        process.exit(0);
      };
      process.on('SIGINT', () => void shutdown('SIGINT'));
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
    },
    (err: unknown) => {
      console.error(`[${label}] failed to start:`, err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
