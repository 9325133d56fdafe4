import type { ActivityDeps } from './deps.js';
import { embeddingActivities } from './embedding/activities.js';
import { evalActivities } from './evals/activities.js';
import { guardrailActivities } from './guardrails/activities.js';
import { healthActivities } from './health/activities.js';
import { knowledgeActivities } from './knowledge/activities.js';
import { modelActivities } from './models/activities.js';
import { runActivities } from './runs/activities.js';
import { scheduleActivities } from './schedules/activities.js';
import { toolActivities } from './tools/activities.js';
import { webhookActivities } from './webhooks/activities.js';

/**
 * Every activity the workers register, by area. Each area's `activities.ts` binds its Temporal-facing
 * functions to their dependencies; the domain code under them (plain functions of a database and
 * their inputs) is what the API calls too. Nothing here imports `api/`.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...healthActivities(deps),
    ...runActivities(deps),
    ...modelActivities(deps),
    ...toolActivities(deps),
    ...guardrailActivities(deps),
    ...knowledgeActivities(deps),
    ...embeddingActivities(deps),
    ...evalActivities(deps),
    ...scheduleActivities(deps),
    ...webhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { ActivityDeps };
