import Koa from 'koa';
import type { AppDeps } from './deps.js';
import { errorBodies } from './middleware/errors.js';
import { methodNotAllowed } from './middleware/method-not-allowed.js';
import { mcpEndpoint } from './mcp/endpoint.js';
import { requestId } from './middleware/request-id.js';
import type { AnyOperation } from './operation.js';
import { oauthRoutes } from './oauth/router.js';
import { consoleRoutes } from './console/router.js';
import { invitePageRoutes } from './invites/router.js';
import { buildRouters } from './router.js';
import { routesByPrefix } from './routes-by-prefix.js';
import { proxyHopsFromEnv, trustProxies } from './trust-proxy.js';
import agents from './routes/agents.js';
import apiKeys from './routes/api-keys.js';
import members from './routes/members.js';
import invites from './routes/invites.js';
import evalSuites from './routes/eval-suites.js';
import experiments from './routes/experiments.js';
import health from './routes/health.js';
import { openApiOperation } from './routes/openapi.js';
import guardrails from './routes/guardrails.js';
import knowledge from './routes/knowledge.js';
import memory from './routes/memory.js';
import prompts from './routes/prompts.js';
import providers from './routes/providers.js';
import runs from './routes/runs.js';
import schedules from './routes/schedules.js';
import skills from './routes/skills.js';
import threads from './routes/threads.js';
import tools from './routes/tools.js';
import webhooks from './routes/webhooks.js';
import deployments from './routes/deployments.js';
import channels from './routes/channels.js';
import voice from './routes/voice.js';
import browser from './routes/browser.js';
import { deploymentPreflight } from './deployments/cors.js';
import { deploymentPageRoutes } from './deployments/page-router.js';

/** Every operation the API serves, in the order the OpenAPI document lists them. */
export function allOperations(): AnyOperation[] {
  const operations: AnyOperation[] = [...health, ...agents, ...runs, ...threads, ...tools, ...prompts, ...skills, ...guardrails, ...memory, ...knowledge, ...evalSuites, ...experiments, ...providers, ...schedules, ...webhooks, ...apiKeys, ...members, ...invites, ...deployments, ...channels, ...voice, ...browser];
  operations.push(openApiOperation(() => operations));
  return operations;
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  trustProxies(app, proxyHopsFromEnv(process.env.TRUST_PROXY));
  app.on('error', logUnexpected);
  app.use(requestId);
  app.use(errorBodies);
  app.use(deploymentPreflight(allOperations(), deps.db));
  app.use(mcpEndpoint(allOperations(), deps));
  const routers = [oauthRoutes(deps), invitePageRoutes(deps), consoleRoutes(deps), deploymentPageRoutes(deps), ...buildRouters(allOperations(), deps)];
  app.use(methodNotAllowed(routers));
  app.use(routesByPrefix(routers));
  return app;
}

/**
 * A client hanging up on a stream is how streams end, not an error worth a stack trace; so is hanging up
 * before a response began (ERR_STREAM_UNABLE_TO_PIPE: a request pipelined behind a stream, its
 * connection closed before its turn came).
 */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_UNABLE_TO_PIPE']);

function logUnexpected(err: NodeJS.ErrnoException): void {
  if (err.code !== undefined && CLIENT_GONE.has(err.code)) return;
  console.error('[api]', err);
}
