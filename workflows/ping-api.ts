/**
 * The health-check workflow's contract: it runs on any task queue (workers poll them all), and answers
 * with its message and whether the worker's database answered. Start it with
 * `client.workflow.execute<typeof ping>(PING_WORKFLOW_TYPE, …)` through a type-only import of `ping`.
 */
export const PING_WORKFLOW_TYPE = 'ping';

export interface PingResult {
  echo: string;
  database: boolean;
}
