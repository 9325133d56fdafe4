import { isVisitorOfThread } from '../../db/deployments.js';
import type { Run } from '../../db/schema.js';
import type { Db } from '../../db/database.js';
import { withTenant, type TenantScoped, type TenantTx } from '../../db/tenant-transaction.js';
import { clientAddress } from '../client-address.js';
import { notFound } from '../errors.js';
import type { Caller } from '../operation.js';
import { RUN_RATE_LIMIT, takeRateLimitToken, takeRateLimitTokenNow } from '../rate-limit.js';

/**
 * How the operations that take a publishable key (`publishable`) confine it to its deployment. To the
 * key, nothing else exists: another agent, or a run it did not start, is a 404 as another workspace's is.
 */

/** The agent the caller may run: any for an API key; for a publishable key only its deployment's. */
export function agentOfCaller<A extends { id: string }>(caller: Caller, agent: A, ref: string): A {
  if (caller.deployment && agent.id !== caller.deployment.agentId) throw notFound('agent', ref);
  return agent;
}

/**
 * The header a publishable key's caller sends its visitor token in: the key is public, so the token
 * that starting the thread handed out is what keeps one visitor's conversation from another's.
 */
export const VISITOR_TOKEN_HEADER = 'X-Visitor-Token';

/**
 * The run the caller may read or answer: any of the workspace's for an API key; for a publishable key
 * only one its deployment started, on a thread whose visitor token `visitorToken` is.
 */
export async function runOfCaller(reader: TenantScoped, caller: Caller, run: Run, ref: string, visitorToken: string): Promise<Run> {
  if (!caller.deployment) return run;
  if (run.deployment_id !== caller.deployment.id || !(await isVisitor(reader, caller, run.thread_id, visitorToken))) throw notFound('run', ref);
  return run;
}

/** For a publishable key: 404 unless its deployment started the thread and `visitorToken` is the thread's. */
export async function threadOfCaller(tx: TenantTx, caller: Caller, threadId: string, visitorToken: string): Promise<void> {
  if (caller.deployment && !(await isVisitor(tx, caller, threadId, visitorToken))) throw notFound('thread', threadId);
}

async function isVisitor(reader: TenantScoped, caller: Caller, threadId: string, visitorToken: string): Promise<boolean> {
  return visitorToken !== '' && isVisitorOfThread(reader, caller.tenantId, caller.deployment!.id, threadId, visitorToken);
}

/** What a run the caller starts records: its source and, for a publishable key, its deployment and pinned version. */
export function runOrigin(caller: Caller): { source: 'api' | 'deployment'; deploymentId?: string; pinnedVersion?: number } {
  if (!caller.deployment) return { source: 'api' };
  return { source: 'deployment', deploymentId: caller.deployment.id, ...(caller.deployment.version !== null && { pinnedVersion: caller.deployment.version }) };
}

/**
 * Counts a run request against the caller's limits: an API key's 60 per minute; a deployment's own
 * limit and its per-visitor (IP address) limit. Answers the RateLimit-* headers of the tightest.
 */
export async function takeRunRateLimit(db: Db, caller: Caller, visitorIp: string): Promise<Record<string, string>> {
  const scope = caller.deployment;
  if (!scope) return takeRateLimitTokenNow(db, caller.tenantId, caller.keyId, RUN_RATE_LIMIT);
  // Both limits in one transaction: a request the visitor's limit refuses is not counted against the deployment's.
  return withTenant(db, caller.tenantId, async (tx) => {
    const perDeployment = await takeRateLimitToken(tx, caller.tenantId, scope.id, { bucket: 'deployment-runs', limit: scope.runsPerMinute, windowSeconds: 60 });
    const perVisitor = await takeRateLimitToken(tx, caller.tenantId, `${scope.id}:${clientAddress(visitorIp)}`, {
      bucket: 'deployment-visitor-runs',
      limit: scope.runsPerMinutePerVisitor,
      windowSeconds: 60,
    });
    return Number(perVisitor['RateLimit-Remaining']) < Number(perDeployment['RateLimit-Remaining']) ? perVisitor : perDeployment;
  });
}

