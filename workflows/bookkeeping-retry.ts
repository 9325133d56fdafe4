import type { RetryPolicy } from '@temporalio/common';

/**
 * How short bookkeeping activities (database writes, the input guardrail check) retry: long enough to ride
 * out a Postgres restart or a worker crash, and finite, so that one that fails for good fails its workflow
 * with the reason instead of retrying (and costing a worker) forever. An activity that fails at once is
 * tried for about three and a half minutes (after 1, 2, 4, 8 and 16 s, then every 30 s); one that hangs
 * until its start-to-close timeout, 12 times. Time spent waiting for a worker to poll costs no attempt.
 */
export const BOOKKEEPING_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 12,
} as const satisfies RetryPolicy;
