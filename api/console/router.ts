import Router from '@koa/router';
import { answerPage, redirect } from '../oauth/authorize-endpoint.js';
import type { AppDeps } from '../deps.js';
import { endSession } from '../oauth/sessions.js';
import { signInWithPassword } from '../oauth/sign-in.js';
import { showExperiment, streamExperiment } from './experiment-page.js';
import { showInbox, streamInbox, submitAnswer } from './inbox.js';
import { signInPage } from './layout.js';
import { consoleRoute, readCheckedForm, safeNext, signedInRoute } from './request.js';
import { showRun, streamRun } from './run-page.js';

/**
 * {app_url}/console (docs/console.md): where people answer their agents' questions and follow runs and
 * experiments, signed in with the consent page's accounts and session. HTML pages and form posts, so
 * like the OAuth pages they live outside the OpenAPI document.
 */
export function consoleRoutes(deps: AppDeps): Router {
  const router = new Router();
  router.get('/console', signedInRoute(deps, showInbox));
  router.get('/console/inbox', signedInRoute(deps, showInbox));
  router.get('/console/inbox/events', signedInRoute(deps, streamInbox));
  router.post('/console/runs/:id/answer', signedInRoute(deps, submitAnswer));
  router.get('/console/runs/:id', signedInRoute(deps, showRun));
  router.get('/console/runs/:id/events', signedInRoute(deps, streamRun));
  router.get('/console/experiments/:id', signedInRoute(deps, showExperiment));
  router.get('/console/experiments/:id/events', signedInRoute(deps, streamExperiment));

  router.post(
    '/console/sign-in',
    consoleRoute(deps, async (request) => {
      const { ctx, session, page } = request;
      const form = await readCheckedForm(request);
      if (!form) return;
      const next = safeNext(form.get('next'));
      const email = form.get('email') ?? '';
      const outcome = await signInWithPassword(ctx, deps.db, deps.publicUrl, session, email, form.get('password') ?? '');
      if (!outcome.ok) return answerPage(ctx, outcome.status, signInPage(page, next, { email, error: outcome.error }));
      redirect(ctx, 303, next);
    }),
  );
  router.post(
    '/console/sign-out',
    consoleRoute(deps, async (request) => {
      const form = await readCheckedForm(request);
      if (!form) return;
      await endSession(request.ctx, deps.db, deps.publicUrl, request.session);
      redirect(request.ctx, 303, '/console');
    }),
  );
  return router;
}
