import Router from '@koa/router';
import type { AppDeps } from '../deps.js';
import { showAuthorizePage, submitAuthorizeForm } from './authorize-endpoint.js';
import { allowAnyOrigin, corsPreflight, oauthJson } from './http.js';
import { authorizationServerMetadata } from './metadata.js';
import { registrationEndpoint } from './registration-endpoint.js';
import { revocationEndpoint } from './revocation-endpoint.js';
import { tokenEndpoint } from './token-endpoint.js';

/**
 * The OAuth 2.0 authorization server's endpoints (docs/oauth.md). They are not API operations: they
 * speak forms, HTML and RFC 6749 error bodies, so they live outside the OpenAPI document. Any other
 * /.well-known/ path falls through to the API's JSON 404.
 */
export function oauthRoutes(deps: AppDeps): Router {
  const router = new Router();
  // deps.publicUrl is read per request: with PORT=0 it is only known once the server listens.
  router.get('/.well-known/oauth-authorization-server', (ctx) => {
    allowAnyOrigin(ctx);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = authorizationServerMetadata(deps.publicUrl);
  });
  router.get('/oauth/authorize', (ctx) => showAuthorizePage(ctx, deps.db, deps.publicUrl));
  router.post('/oauth/authorize', (ctx) => submitAuthorizeForm(ctx, deps.db, deps.publicUrl));
  router.post('/oauth/token', (ctx) => oauthJson(ctx, () => tokenEndpoint(ctx, deps.db, deps.publicUrl)));
  router.post('/oauth/register', (ctx) => oauthJson(ctx, () => registrationEndpoint(ctx, deps.db)));
  router.post('/oauth/revoke', (ctx) => oauthJson(ctx, () => revocationEndpoint(ctx, deps.db)));
  for (const path of ['/.well-known/oauth-authorization-server', '/oauth/token', '/oauth/register', '/oauth/revoke']) {
    router.options(path, corsPreflight);
  }
  return router;
}
