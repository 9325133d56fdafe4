import Router from '@koa/router';
import type { AppDeps } from '../deps.js';
import { showInvitePage, submitInviteForm } from './invite-page.js';

/** The invite link's page (docs/members.md): HTML and forms, so outside the OpenAPI document like /oauth/authorize. */
export function invitePageRoutes(deps: AppDeps): Router {
  const router = new Router();
  // deps.publicUrl is read per request: with PORT=0 it is only known once the server listens.
  router.get('/invites/:token', (ctx) => showInvitePage(ctx, deps.db, deps.publicUrl, ctx.params.token!));
  router.post('/invites/:token', (ctx) => submitInviteForm(ctx, deps.db, deps.publicUrl, ctx.params.token!));
  return router;
}
