import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import { findAgent } from '../../db/agents.js';
import { findDeploymentBySlug, SLUG_PATTERN } from '../../db/deployments.js';
import type { Deployment } from '../../db/schema.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import type { AppDeps } from '../deps.js';
import { chatPage, chatPageNotFound } from './chat-page.js';

const SLUG = new RegExp(SLUG_PATTERN);

/** `{app_url}/d/{slug}`: a deployment's hosted chat page (docs/deployments.md). Not an API operation: it answers HTML. */
export function deploymentPageRoutes(deps: AppDeps): Router {
  const router = new Router();
  router.get('/d/:slug', async (ctx) => {
    const deployment = SLUG.test(ctx.params.slug!) ? await findDeploymentBySlug(deps.db, ctx.params.slug!) : undefined;
    const nonces = pageHeaders(ctx, deployment);
    ctx.type = 'text/html; charset=utf-8';
    if (!deployment) {
      ctx.status = 404;
      ctx.body = chatPageNotFound(nonces.style);
      return;
    }
    const agent = await readAsTenant(deps.db, deployment.tenant_id, (reader) => findAgent(reader, deployment.tenant_id, deployment.agent_id));
    ctx.status = 200;
    ctx.body = chatPage({
      styleNonce: nonces.style,
      scriptNonce: nonces.script,
      title: deployment.title ?? agent?.name ?? deployment.slug,
      slug: deployment.slug,
      agentId: deployment.agent_id,
      publishableKey: deployment.publishable_key,
    });
  });
  return router;
}

/**
 * The consent page's security headers, with what the chat needs: its one nonce'd script, requests to
 * this origin only, and framing by the deployment's allowed origins (an embedded chat) and no others.
 * Not cached, so a rotated key or a deleted deployment takes effect at once.
 */
function pageHeaders(ctx: Koa.Context, deployment: Deployment | undefined): { style: string; script: string } {
  const nonces = { style: randomBytes(16).toString('base64'), script: randomBytes(16).toString('base64') };
  const framers = deployment?.allowed_origins ?? [];
  ctx.set(
    'Content-Security-Policy',
    [
      "default-src 'none'",
      `style-src 'nonce-${nonces.style}'`,
      `script-src 'nonce-${nonces.script}'`,
      "connect-src 'self'",
      "form-action 'none'",
      `frame-ancestors ${framers.length > 0 ? framers.join(' ') : "'none'"}`,
      "base-uri 'none'",
    ].join('; '),
  );
  if (framers.length === 0) ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  return nonces;
}
