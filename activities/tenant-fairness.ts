import type { Priority } from '@temporalio/common';

/**
 * What every workspace's workflow is started with: its tenant id as Temporal's fairness key. Workspaces
 * share the task queues and the workers' slots; when tasks wait for a slot, Temporal's matching service
 * hands them out round-robin across keys instead of first in, first out, so a workspace with a thousand
 * runs (or an experiment's cells) queued delays another's next task by a turn, not by its whole backlog.
 * A workflow's activities and child workflows inherit the key. It needs `matching.enableFairness` on the
 * server (temporal-dev.yaml, scripts/temporal-dynamic-config.yaml); a server without it ignores the key.
 */
export function tenantFairness(tenantId: string): Priority {
  return { fairnessKey: tenantId };
}
