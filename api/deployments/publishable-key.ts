import type Koa from 'koa';
import type { Db } from '../../db/database.js';
import { findDeploymentByPublishableKey } from '../../db/deployments.js';
import type { Deployment } from '../../db/schema.js';
import { ApiError } from '../errors.js';
import type { Caller } from '../operation.js';

/**
 * A deployment's publishable key (`svc_pk_…`) as a caller. The key is public by design, so what guards
 * it is what it can do: start, follow and answer runs of its deployment's agent (the operations marked
 * `publishable`), and only from the deployment's origins when a browser sends one.
 */
export async function authenticatePublishableKey(ctx: Koa.Context, db: Db, serviceOrigin: string | undefined, credential: string, operationTakesIt: boolean): Promise<Caller> {
  const deployment = await findDeploymentByPublishableKey(db, credential);
  if (!deployment) throw new ApiError('unauthorized', 'unknown or rotated publishable key');
  if (!operationTakesIt) {
    throw new ApiError('forbidden', "a publishable key can only start, follow and answer runs of its deployment's agent");
  }
  const origin = ctx.get('Origin');
  if (origin) {
    if (!originAllowed(serviceOrigin, deployment, origin)) throw new ApiError('forbidden', `origin ${origin} is not among the deployment's allowed_origins`);
    allowOrigin(ctx, origin);
  }
  return {
    tenantId: deployment.tenant_id,
    keyId: deployment.id,
    kind: 'publishable',
    deployment: {
      id: deployment.id,
      agentId: deployment.agent_id,
      version: deployment.version,
      runsPerMinute: deployment.runs_per_minute,
      runsPerMinutePerVisitor: deployment.runs_per_minute_per_visitor,
    },
  };
}

/**
 * Whether the publishable key that opened a visitor's stream still lets it go on: the key is still the
 * deployment's (not rotated, the deployment not deleted), and the page's origin still among those allowed.
 */
export async function publishableKeyStands(ctx: Koa.Context, db: Db, serviceOrigin: string | undefined, credential: string, deploymentId: string): Promise<boolean> {
  const deployment = await findDeploymentByPublishableKey(db, credential);
  if (deployment?.id !== deploymentId) return false;
  const origin = ctx.get('Origin');
  return !origin || originAllowed(serviceOrigin, deployment, origin);
}

/** The deployment's listed origins, and the service's own (its hosted chat page, at PUBLIC_URL). */
function originAllowed(serviceOrigin: string | undefined, deployment: Deployment, origin: string): boolean {
  // Not the request's protocol and host: behind a TLS proxy without TRUST_PROXY those say http.
  return origin === serviceOrigin || deployment.allowed_origins.includes(origin);
}

/** What a cross-origin page needs to read the answer: this origin (never `*`), and the headers it may see. */
export function allowOrigin(ctx: Koa.Context, origin: string): void {
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.vary('Origin');
  ctx.set('Access-Control-Expose-Headers', 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-Request-Id');
}
