import { Context, log } from '@temporalio/activity';

/**
 * How many tries of a bookkeeping activity (pauseRun, finishRun, finishExperiment) may fail on its webhook emission before
 * the emission is let go: the run's record is already final, and an event webhooks could not be told
 * about (Temporal or Postgres away for minutes) must not fail the run's workflow. BOOKKEEPING_RETRY
 * allows 12 tries; the 8th comes about 1.5 minutes after the first.
 */
export const EMISSION_TRIES = 8;

/**
 * Runs a webhook emission after the bookkeeping that made its event has committed. A failure is thrown
 * (so the activity is retried, and emits again: exactly once either way) until the activity's
 * EMISSION_TRIES-th try, where it is logged and swallowed.
 */
export async function emitAfterBookkeeping(event: string, emit: () => Promise<void>): Promise<void> {
  try {
    await emit();
  } catch (err) {
    if (Context.current().info.attempt < EMISSION_TRIES) throw err;
    log.error('webhook event not emitted; the run goes on without it', { event, error: err instanceof Error ? err.message : String(err) });
  }
}
